# The noise of ``fill_noise`` and ``noisy_snapshot`` (``kind``); also Python-visible as
# ``_cgs.NoiseKind`` (a Python enum of the same names and values).
cpdef enum NoiseKind:
    NOISE_NONE = 0
    NOISE_LAPLACE = 1              # float Laplace(scale)
    NOISE_GAUSSIAN = 2             # float Normal(0, scale^2)
    NOISE_DISCRETE_LAPLACE = 3     # CKS20, scale a / b
    NOISE_DISCRETE_GAUSSIAN = 4    # variance a / b: CKS20, or a table (inversion / alias)
    NOISE_DYADIC_LAPLACE = 5       # parameter r = a / 2^21, by table inversion


# ---------------------------------------------------------------------------------------
# Exact discrete noise (Canonne, Kamath & Steinke 2020, "The discrete Gaussian for
# differential privacy", Algorithms 1-3), for rational parameters, with the Bernoulli(exp)
# steps decided lazily (below): the output follows the stated pmf exactly.

# Cython would type uint128 as a 64-bit integer; the C helpers below keep its width.
cdef extern from *:
    ctypedef unsigned long long uint128 "unsigned __int128"


cdef extern from "_kernels/cgs_exact.h":
    int dptm_clz64(unsigned long long x) noexcept nogil


cdef struct Bits:
    # A BitGenerator and a pool of its unread bits (most significant first): the exact
    # samplers below need a few bits per uniform integer, not a whole 64-bit draw each.
    bitgen_t* rng
    uint64_t pool
    int n


cdef inline void _bits_init(Bits* src, bitgen_t* rng) noexcept nogil:
    src.rng = rng
    src.pool = 0
    src.n = 0


cdef inline uint64_t _uniform_below(Bits* src, uint64_t m) noexcept nogil:
    """Uniform integer in [0, m), m >= 1: the top ceil(log2 m) bits of the pool, rejected
    while >= m (exact; the bits left in the pool stay uniform and independent)."""
    cdef int nbits
    cdef uint64_t v
    if m <= 1:
        return 0
    nbits = 64 - dptm_clz64(m - 1)
    if nbits == 64:
        while True:
            v = src.rng.next_uint64(src.rng.state)
            if v < m:
                return v
    while True:
        if src.n < nbits:
            src.pool = src.rng.next_uint64(src.rng.state)   # the < nbits bits left are dropped
            src.n = 64
        v = src.pool >> (64 - nbits)
        src.pool <<= nbits
        src.n -= nbits
        if v < m:
            return v


# Each Bernoulli(exp(-g)), g = num / den >= 0 rational, is decided lazily and exactly: a
# 64-bit uniform u (U in [u, u + 1) / 2^64) is compared with p = exp(-g) evaluated in double
# precision. That value is within 2^-49 of the true p (g to relative 2^-50 from exact
# integers, and a relative error rho in g moves exp(-g) by at most g e^-g rho (1 + rho) <=
# rho / e; libm's exp within an ulp), and u / 2^64 is within 2^-53
# of U, so a comparison with a margin of 2^-36 is never wrong; inside the margin
# (probability < 2^-34) the uniform's further bits are drawn and ``dptm.noise.exact`` decides
# with exact rational arithmetic. The samplers' output follows the stated pmf exactly.

cdef double LAZY_MARGIN = 1.0 / 68719476736.0    # 2^-36
cdef double TWO_M64 = 1.0 / 18446744073709551616.0  # 2^-64


cdef extern from "_kernels/cgs_exact.h":
    uint64_t dptm_hi64(uint128 a) nogil
    uint64_t dptm_lo64(uint128 a) nogil
    double dptm_u128_to_double(uint128 a) nogil


cdef bint _resolve(bitgen_t* rng, uint64_t u, object num, object den,
                   object scale) noexcept with gil:
    """The rare exact path: U * scale < exp(-num / den) for the uniform U whose first 64
    bits are ``u`` (more are drawn as needed). Fails closed: an error here (a bug, or no
    memory) aborts the process rather than return a decision the pmf does not justify."""
    try:
        big, nbits = u, 64
        while True:
            r = _exact.uniform_below_exp(big, nbits, num, den, scale)
            if r is not None:
                return r
            big = (big << 64) | rng.next_uint64(rng.state)
            nbits += 64
    except BaseException:
        import traceback
        traceback.print_exc()
        abort()


cdef bint _resolve_below_exp(bitgen_t* rng, uint64_t u, uint128 a, uint64_t den,
                             bint squared) noexcept with gil:
    """U < exp(-num / den), num = a^2 if ``squared`` else a."""
    cdef object hi = dptm_hi64(a), lo = dptm_lo64(a)
    num = (hi << 64) | lo
    return _resolve(rng, u, num * num if squared else num, den, 1)


cdef inline bint _bernoulli_exp(bitgen_t* rng, double g, uint128 a, uint64_t den,
                                bint squared) noexcept nogil:
    """Bernoulli(exp(-num / den)) exactly, num = a^2 if ``squared`` else a; ``g`` is
    num / den in double precision (relative error at most 2^-50)."""
    cdef uint64_t u = rng.next_uint64(rng.state)
    cdef double x = <double> u * TWO_M64
    cdef double p = exp(-g)
    if x < p - LAZY_MARGIN:
        return 1
    if x > p + LAZY_MARGIN:
        return 0
    return _resolve_below_exp(rng, u, a, den, squared)


cdef int64_t _discrete_laplace(Bits* rng, uint64_t t, uint64_t s) noexcept nogil:
    """Discrete Laplace with scale t/s: P(x) proportional to exp(-|x| s / t) on the
    integers (CKS20 Algorithm 2: U uniform on [0, t) kept with probability exp(-U/t), plus
    t times a Geometric(exp(-1)) count, divided by s; a random sign, -0 rejected)."""
    cdef uint64_t u, v, y
    cdef uint128 y_wide
    cdef double inv_t = 1.0 / <double> t
    while True:
        u = _uniform_below(rng, t)
        if u and not _bernoulli_exp(rng.rng, u * inv_t, u, t, 0):
            continue
        v = 0
        while _bernoulli_exp(rng.rng, 1.0, 1, 1, 0):
            v += 1
        # in 128 bits: t may be up to 2^60, and u + t v must not wrap (a wrapped value would
        # cut the tail off); a result past int64 (probability about e^-(2^23)) fails closed
        y_wide = (<uint128> u + <uint128> t * v) // s
        if y_wide >= (<uint128> 1 << 63):
            abort()
        y = <uint64_t> y_wide
        if _uniform_below(rng, 2):
            if y == 0:
                continue
            return -<int64_t> y
        return <int64_t> y


cdef int64_t _discrete_gaussian(Bits* rng, uint64_t p, uint64_t q, uint64_t t) noexcept nogil:
    """Discrete Gaussian with variance parameter sigma^2 = p/q, t = floor(sigma) + 1:
    P(x) proportional to exp(-x^2 / (2 sigma^2)) on the integers (CKS20 Algorithm 3).

    Accepts a discrete Laplace(t) draw Y with probability
    exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2)) = exp(-(|Y| t q - p)^2 / (2 p q t^2))."""
    cdef int64_t y
    cdef uint128 a, ay
    cdef uint128 pp = p
    cdef uint64_t den = 2 * p * q * t * t
    cdef double ad, dden = <double> den
    while True:
        y = _discrete_laplace(rng, t, 1)
        ay = <uint128> (y if y >= 0 else -y)
        a = ay * t * q
        a = a - pp if a >= pp else pp - a
        ad = dptm_u128_to_double(a)
        if _bernoulli_exp(rng.rng, ad * ad / dden, a, den, 1):
            return y


# Discrete Laplace with a dyadic parameter r = a / 2^21 (the default noise of the snapshots):
# P(x) = (1 - r) / (1 + r) r^|x| on the integers (scale -1 / log r), by exact inversion of
# |x| with the integer table of ``dptm.noise.laplace_table`` (construction and proof there):
# G + 1 bits per draw (G index bits, one sign bit) in lanes of one 64-bit word, one table
# read for nearly every draw, integer comparisons only. The pmf is exact, and an output's
# bits carry nothing but its value.


cdef int DYADIC_BITS = 21
DYADIC_DENOMINATOR = 1 << 21


cdef extern from "_kernels/cgs_exact.h":
    int dptm_ctz64(unsigned long long x) noexcept nogil


cdef struct LaplaceTable:
    const int16_t* guide       # 2^G entries: |x| if the G index bits decide, else -(first + 1)
    const int32_t* hi          # per threshold row m: floor(T_m 2^(G + L)) >> L ...
    const uint64_t* lo         # ... and its low L bits
    uint64_t a
    int index_bits, low_bits   # G, L
    int family                 # thresholds of: 0 the dyadic Laplace (a), 1 discrete Gaussian (p/q)
    uint64_t p, q
    int lane_bits, lanes       # G + 1 bits per draw, 64 // (G + 1) draws per word
    uint64_t lane_mask


cdef struct Lanes:
    uint64_t word              # the unread lanes of the last 64-bit draw, next in the low bits
    int left


cdef int64_t _dlap_resolve(bitgen_t* rng, const LaplaceTable* T, uint64_t g, uint64_t v,
                           int64_t m) noexcept with gil:
    """Stage 3 (``_laplace_table.resolve`` or ``_gauss_inversion.resolve``, exact
    integers): |x| for the uniform whose first G + L bits are g, v, given that it lies below
    the threshold of every row j < m; reads more 64-bit words as needed. Fails closed: an
    error here aborts the process rather than return a value the pmf does not justify."""
    try:
        big, nbits = (int(g) << T.low_bits) | int(v), T.index_bits + T.low_bits
        while True:
            if T.family == 1:
                r = _gauss_inversion.resolve(int(T.p), int(T.q), big, nbits, m)
            else:
                r = _laplace_table.resolve(int(T.a), big, nbits, m)
            if r is not None:
                if not r >= m - 1:
                    raise AssertionError("resolve went below the thresholds already decided")
                return r
            big = (big << 64) | rng.next_uint64(rng.state)
            nbits += 64
    except BaseException:
        import traceback
        traceback.print_exc()
        abort()


cdef int64_t _dlap_stage2(bitgen_t* rng, const LaplaceTable* T, uint64_t g,
                          int64_t m) noexcept nogil:
    """|x| when the interval g of the index bits holds thresholds (rows m + 1, ... with
    hi == g; the rows up to m lie above the interval): L more bits of the uniform decide
    each one, the last row (hi = lo = 0) stops the scan."""
    cdef uint64_t v = rng.next_uint64(rng.state)
    if T.low_bits < 64:
        v >>= 64 - T.low_bits
    while T.hi[m + 1] == <int32_t> g and T.lo[m + 1] > v:
        m += 1                                       # U < T_(m+1) for sure
    if T.hi[m + 1] == <int32_t> g and T.lo[m + 1] == v:
        return _dlap_resolve(rng, T, g, v, m + 1)    # the L bits do not decide T_(m+1)
    return m


cdef inline int64_t _dlap_draw(bitgen_t* rng, Lanes* ln, const LaplaceTable* T) noexcept nogil:
    """One exact discrete Laplace draw: the next lane's low bit is the sign, its G bits
    above index the guide."""
    cdef uint64_t lane
    cdef int64_t m, s
    if ln.left == 0:
        ln.word = rng.next_uint64(rng.state)
        ln.left = T.lanes
    lane = ln.word & T.lane_mask
    ln.word >>= T.lane_bits
    ln.left -= 1
    m = T.guide[lane >> 1]
    if m < 0:
        m = _dlap_stage2(rng, T, lane >> 1, -m - 1)
    s = <int64_t> (lane & 1)
    return (m ^ -s) + s                              # -m when the sign bit is set (-0 = 0)


cdef _set_laplace_table(LaplaceTable* T, dict table, uint64_t a):
    """Check a table of ``dptm.noise.laplace_table.dyadic_table(a)`` (the structure the proof
    needs, so that a corrupted table is refused rather than sampled) and point ``T`` at its
    arrays (``table`` must stay alive while ``T`` is used)."""
    if table["a"] != a:
        raise ValueError("the Laplace table was built for another parameter than a")
    _set_inversion_table(T, table, "Laplace")
    T.a, T.family, T.p, T.q = a, 0, 0, 0


cdef _set_gauss_inversion(LaplaceTable* T, dict table, uint64_t p, uint64_t q):
    """The same for a table of ``dptm.noise.gauss_inversion.inversion_table(p, q)``."""
    if table.get("p") != p or table.get("q") != q or "guide" not in table:
        raise ValueError("the inversion table was built for another variance than p/q")
    _set_inversion_table(T, table, "inversion")
    T.a, T.family, T.p, T.q = 0, 1, p, q


cdef _set_inversion_table(LaplaceTable* T, dict table, str name):
    """The structure shared by both tables (``dptm.noise.laplace_table``'s stages)."""
    cdef const int16_t[::1] guide = table["guide"]
    cdef const int32_t[::1] hi = table["hi"]
    cdef const uint64_t[::1] lo = table["lo"]
    cdef int G = table["index_bits"], L = table["low_bits"]
    cdef Py_ssize_t i, g, n = hi.shape[0], first = 0
    if not 1 <= G <= 15 or not 1 <= L <= 64 or guide.shape[0] != (1 << G) \
            or lo.shape[0] != n or n < 2 or hi[n - 1] != 0 or lo[n - 1] != 0:
        raise ValueError(f"inconsistent {name} table")
    for i in range(1, n):
        # t_m = hi << L | lo: below 2^(G + L), non-increasing in m
        if not 0 <= hi[i] < (1 << G) or (L < 64 and lo[i] >> L) or (i > 1 and (
                hi[i] > hi[i - 1] or (hi[i] == hi[i - 1] and lo[i] > lo[i - 1]))):
            raise ValueError(f"inconsistent {name} table")
    # guide[g]: first[g] = #{m >= 1 : hi[m] > g}, negative iff some hi[m] == g
    for g in range((1 << G) - 1, -1, -1):
        while first + 1 < n and hi[first + 1] > g:
            first += 1
        if guide[g] != (-(first + 1) if hi[first + 1] == g else first):
            raise ValueError(f"inconsistent {name} table")
    T.guide, T.hi, T.lo = &guide[0], &hi[0], &lo[0]
    T.index_bits, T.low_bits = G, L
    T.lane_bits = G + 1
    T.lanes = 64 // (G + 1)
    T.lane_mask = (<uint64_t> 1 << (G + 1)) - 1


def fill_noise(double[::1] out, int kind, double scale, object bit_generator):
    """Fill ``out`` with i.i.d. continuous noise: ``kind`` 1 = Laplace(0, scale) as
    scale * (E1 - E2) with E1, E2 standard exponentials (numpy's ziggurat
    ``random_standard_exponential``; exact in distribution, no logarithm), 2 = Normal(0,
    scale^2) (``random_standard_normal``)."""
    cdef Py_ssize_t i, n = out.shape[0]
    cdef bitgen_t* rng = get_bitgen(bit_generator)
    if kind not in (NOISE_LAPLACE, NOISE_GAUSSIAN):
        raise ValueError("kind must be 1 (Laplace) or 2 (Gaussian)")
    with bit_generator.lock, nogil:
        if kind == NOISE_LAPLACE:
            for i in range(n):
                out[i] = scale * (random_standard_exponential(rng)
                                  - random_standard_exponential(rng))
        else:
            for i in range(n):
                out[i] = scale * random_standard_normal(rng)


def fill_discrete_laplace(int64_t[::1] out, uint64_t t, uint64_t s, object bit_generator):
    """Fill ``out`` with exact discrete Laplace draws of scale t/s (CKS20 Algorithm 2)."""
    cdef Py_ssize_t i, n = out.shape[0]
    cdef bitgen_t* rng = get_bitgen(bit_generator)
    cdef Bits src
    if t < 1 or s < 1:
        raise ValueError("t and s must be positive integers")
    with bit_generator.lock, nogil:
        _bits_init(&src, rng)
        for i in range(n):
            out[i] = _discrete_laplace(&src, t, s)


def fill_discrete_gaussian(int64_t[::1] out, uint64_t p, uint64_t q, uint64_t t,
                           object bit_generator):
    """Fill ``out`` with exact discrete Gaussian draws of variance parameter p/q
    (CKS20 Algorithm 3); ``t`` must be floor(sqrt(p/q)) + 1 and 2 p q t^2 < 2^64."""
    cdef Py_ssize_t i, n = out.shape[0]
    cdef bitgen_t* rng = get_bitgen(bit_generator)
    cdef Bits src
    if p < 1 or q < 1 or t < 1:
        raise ValueError("p, q and t must be positive integers")
    P, Q, T = int(p), int(q), int(t)
    if 2 * P * Q * T * T >= 2 ** 64 or not (T - 1) ** 2 * Q <= P < T * T * Q:
        raise ValueError("need t = floor(sqrt(p/q)) + 1 and 2 p q t^2 < 2^64")
    with bit_generator.lock, nogil:
        _bits_init(&src, rng)
        for i in range(n):
            out[i] = _discrete_gaussian(&src, p, q, t)


# Discrete Gaussian (sigma >= 0.5): rejection from a proposal drawn with an integer alias
# table (the construction and its proof are in ``dptm.noise.gauss_table``). The magnitude m >= 0
# is proposed in bins of width B = 2^bin_bits, bin j with probability W_j / 2^52 (the
# integer W_j >= c exp(-(jB)^2 / (2 sigma^2))), uniformly within it, and accepted with
# probability exp(-m^2 / (2 sigma^2)) c / W_j <= 1; one more component covers m >= M =
# n_bins B with a geometric envelope, and the table's slack (the last component) means
# "propose again". The accepted m has pmf proportional to exp(-m^2 / (2 sigma^2)); a random
# sign with -0 rejected gives the discrete Gaussian on the integers. Each acceptance is
# decided like ``_bernoulli_exp``: a lower bound per bin accepts most proposals without
# evaluating exp, the double-precision value decides outside the 2^-36 margin (in the bins
# g = m^2 / (2 sigma^2) < 100 has relative error below 2^-51, so exp(-g) c / W_j is within
# 2^-44 of its true value), and the rare remainder (and every tail proposal, probability
# below 2^-100) is decided exactly.

DEF GAUSS_TABLE_COLUMNS = 256
DEF GAUSS_TABLE_BITS = 52          # each column holds 2^52 units


cdef struct GaussTable:
    const uint64_t* prob           # column i keeps component i when v < prob[i] (v < 2^52)
    const int32_t* alias           # ... and gives alias[i] otherwise
    const double* squeeze          # per bin: the acceptance probability's minimum
    const double* ratio            # per bin: c / W_j (double)
    const uint64_t* weight         # W_j per bin, then the tail's W_T
    Py_ssize_t n_bins
    int bin_bits
    uint64_t c
    double g_coef                  # q / (2 p) = 1 / (2 sigma^2)
    uint64_t p, q


cdef inline bint _table_accept(bitgen_t* rng, const GaussTable* T, int64_t m, Py_ssize_t j,
                               int shift) noexcept nogil:
    """Bernoulli(exp(-m^2 q / (2 p)) c 2^shift / W_j), W_j = weight[j]."""
    cdef uint64_t u = rng.next_uint64(rng.state)
    cdef double x = <double> u * TWO_M64, a
    if shift == 0:
        if x < T.squeeze[j] - LAZY_MARGIN:
            return 1
        a = exp(-(<double> (m * m)) * T.g_coef) * T.ratio[j]
        if x < a - LAZY_MARGIN:
            return 1
        if x > a + LAZY_MARGIN:
            return 0
    return _resolve_table(rng, u, m, T.p, T.q, T.weight[j], T.c, shift)


cdef bint _resolve_table(bitgen_t* rng, uint64_t u, int64_t m, uint64_t p, uint64_t q,
                         uint64_t w, uint64_t c, int shift) noexcept with gil:
    cdef object mm = m
    return _resolve(rng, u, mm * mm * q, 2 * p, Fraction(w, c << shift))


cdef int64_t _discrete_gaussian_table(Bits* src, const GaussTable* T) noexcept nogil:
    cdef uint64_t w, v, r
    cdef Py_ssize_t col, j
    cdef int64_t m, J
    cdef bint neg
    while True:
        w = src.rng.next_uint64(src.rng.state)
        col = <Py_ssize_t> (w >> 56)
        v = w & ((<uint64_t> 1 << GAUSS_TABLE_BITS) - 1)
        neg = (w >> GAUSS_TABLE_BITS) & 1
        j = col if v < T.prob[col] else T.alias[col]
        if j < T.n_bins:
            m = ((<int64_t> j << T.bin_bits)
                 + <int64_t> _uniform_below(src, <uint64_t> 1 << T.bin_bits))
            if not _table_accept(src.rng, T, m, j, 0):
                continue
        elif j == T.n_bins:
            # the tail m >= M: J ~ Geometric(1/2) (trailing zeros of uniform words)
            J = 0
            while True:
                r = src.rng.next_uint64(src.rng.state)
                if r:
                    J += dptm_ctz64(r)
                    break
                J += 64
            m = ((<int64_t> T.n_bins + J) << T.bin_bits) \
                + <int64_t> _uniform_below(src, <uint64_t> 1 << T.bin_bits)
            if not _table_accept(src.rng, T, m, j, <int> (J + 1)):
                continue
        else:
            continue                                  # the table's slack: propose again
        if neg:
            if m == 0:
                continue
            return -m
        return m


cdef _set_gauss_table(GaussTable* T, dict table):
    """Check a table of ``dptm.noise.gauss_table.gauss_table`` and point ``T`` at its arrays
    (``table`` must stay alive while ``T`` is used)."""
    cdef const uint64_t[::1] prob = table["prob"], weight = table["weight"]
    cdef const int32_t[::1] alias = table["alias"]
    cdef const double[::1] squeeze = table["squeeze"], ratio = table["ratio"]
    cdef uint64_t p = table["p"], q = table["q"], c = table["c"]
    cdef int bin_bits = table["bin_bits"]
    cdef Py_ssize_t i, n_bins = ratio.shape[0]
    if prob.shape[0] != GAUSS_TABLE_COLUMNS or alias.shape[0] != GAUSS_TABLE_COLUMNS:
        raise ValueError("prob and alias must have 256 entries")
    if squeeze.shape[0] != n_bins or weight.shape[0] != n_bins + 1 \
            or not 0 < n_bins <= GAUSS_TABLE_COLUMNS - 2 or not 0 <= bin_bits <= 20 \
            or p < 1 or q < 1 or c < 1:
        raise ValueError("inconsistent Gaussian table")
    for i in range(GAUSS_TABLE_COLUMNS):
        if not 0 <= alias[i] <= n_bins + 1 or prob[i] > (<uint64_t> 1 << GAUSS_TABLE_BITS) \
                or (i > n_bins + 1 and prob[i] != 0):
            raise ValueError("inconsistent Gaussian table")
    T.prob, T.alias, T.squeeze = &prob[0], &alias[0], &squeeze[0]
    T.ratio, T.weight = &ratio[0], &weight[0]
    T.n_bins, T.bin_bits, T.c, T.p, T.q = n_bins, bin_bits, c, p, q
    T.g_coef = <double> q / (2.0 * <double> p)


def fill_discrete_gaussian_table(int64_t[::1] out, dict table, object bit_generator):
    """Fill ``out`` with exact discrete Gaussian draws of variance parameter p/q through
    the alias-table proposal ``table = dptm.noise.gauss_table.gauss_table(p, q)``."""
    cdef Py_ssize_t i, n = out.shape[0]
    cdef bitgen_t* rng = get_bitgen(bit_generator)
    cdef Bits src
    cdef GaussTable T
    _set_gauss_table(&T, table)
    with bit_generator.lock, nogil:
        _bits_init(&src, rng)
        for i in range(n):
            out[i] = _discrete_gaussian_table(&src, &T)


# Discrete Gaussian by exact inversion (SubsampledGibbsLDA's snapshots): the kernel of the
# dyadic discrete Laplace above (guide, stage 2, exact stage 3, sign bit; ``_dlap_draw``)
# on the thresholds S_m = P(|x| >= m) of N_Z(0, p/q), taken from guaranteed rational bounds
# (``dptm.noise.gauss_inversion``: construction and proof). G + 1 bits and one table read for
# nearly every draw; the pmf is exact.
