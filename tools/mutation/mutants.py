"""The documented mutants of privacy-relevant code (see run.py).

Each mutant: ``id``; ``file``; ``old``, an exact substring occurring once; ``new``, its
replacement (or ``edits``, a list of such (old, new) pairs applied together); ``tests``, the test files (or node ids) run against it; ``what``, the bug it
models. ``equivalent`` (optional) explains why a survivor is harmless.
"""

MECH = ["tests/test_mechanisms.py", "tests/test_secret_randomness.py", "tests/test_empirical_dp.py",
        "tests/test_exact_sampling.py", "tests/test_gauss_table.py"]
ACC = ["tests/test_accounting_primitives.py", "tests/test_accounting_accountants.py",
       "tests/test_accounting_soundness.py", "tests/test_accounting_recipes.py",
       "tests/test_accounting_robust.py", "tests/test_accounting_golden.py"]
GIBBS = ["tests/test_private_gibbs.py", "tests/test_private_gibbs_ledger.py",
         "tests/test_private_gibbs_order.py", "tests/test_private_gibbs_release.py",
         "tests/test_private_gibbs_secrets.py"]
BATCH = ["tests/test_private_vb.py", "tests/test_accounting_parallel.py"]
# the fused statistic kernel of PrivateBatchLDA (clip, lattice, exact check, sum)
_CLIP = "dptm/_kernels/svi_clipped_sum.pxi"
AUDIT = ["tests/test_audit_experiment.py", "tests/test_lira.py"]
REPORT = ["tests/test_release.py", "tests/test_secret_randomness.py"]
DLAP = ["tests/test_laplace_table.py", "tests/test_private_gibbs_ledger.py"]
GINV = ["tests/test_gauss_inversion.py", "tests/test_private_gibbs_ledger.py"]
SVI = ["tests/test_svi_ledger.py", "tests/test_svi_release.py", "tests/test_svi_empirical_dp.py",
       "tests/test_svi.py"]

MUTANTS = [
    # -- the secret noise source -------------------------------------------------------
    dict(id="R01", file="dptm/noise/secret.py", old='os.urandom(16), "little"', new='bytes(16), "little"',
         tests=MECH, what="secret generator keyed with a constant instead of OS entropy"),
    dict(id="R02", file="dptm/noise/secret.py", old="        return secret_generator(), False",
         new="        return np.random.Generator(AESCounter(seed=0)), False",
         tests=MECH, what="default (unseeded) private generator is a fixed-seed generator"),
    dict(id="R03", file="dptm/noise/secret.py", old="SeededPrivacyWarning, stacklevel=user_stacklevel()",
         new="UserWarning, stacklevel=user_stacklevel()", tests=MECH,
         what="seeded test mode not flagged with SeededPrivacyWarning"),
    dict(id="R04", file="dptm/noise/secret.py", old="    return gen, True", new="    return gen, False",
         tests=MECH, what="seeded test mode reported as secret"),
    dict(id="R05", file="dptm/_kernels/cgs_helpers.pxi", old="j = <Py_ssize_t> random_interval(rng, <uint64_t> i)",
         new="j = <Py_ssize_t> random_interval(rng, <uint64_t> i - 1)", tests=MECH,
         what="token shuffle is Sattolo's (cyclic permutations only), not uniform"),
    dict(id="R06", file="dptm/noise/secret.py", old='    return int.from_bytes(os.urandom(8), "little") >> 1',
         new="    return 12345", tests=MECH, what="public seed constant (fold-in streams shared)"),
    # -- exact noise ---------------------------------------------------------------------
    dict(id="N01", file="dptm/noise/mechanisms.py", old="    return base + noise * g, g, g * discrete_gaussian_parameters",
         new="    return base + noise * g / 2, g, g * discrete_gaussian_parameters", tests=MECH,
         what="lattice Gaussian adds half the noise it reports"),
    dict(id="N02", file="dptm/noise/mechanisms.py", old="    noise = discrete_laplace_noise(base.shape, scale / g, rng)",
         new="    noise = discrete_laplace_noise(base.shape, scale / g / 2, rng)", tests=MECH,
         what="lattice Laplace draws half the scale it reports"),
    dict(id="N03", file="dptm/noise/mechanisms.py", old="    k = np.rint(x / g)", new="    k = x / g",
         tests=MECH, what="statistic not rounded to the lattice (input low bits leak)"),
    dict(id="N04", file="dptm/noise/mechanisms.py", old="        return per_coord * math.sqrt(int(n_coords))",
         new="        return per_coord / 2 * math.sqrt(int(n_coords))", tests=MECH,
         what="L2 rounding slack understated"),
    dict(id="N05", file="dptm/noise/mechanisms.py",
         old="    g = math.ldexp(1.0, math.frexp(scale)[1] - 1 - _LATTICE_STEPS)",
         new="    g = math.ldexp(1.0, math.frexp(scale)[1] - 1 - 2)", tests=MECH,
         what="lattice far too coarse (rounding comparable to the noise)"),
    dict(id="N06", file="dptm/noise/mechanisms.py", old="frac = Fraction(math.ceil(Fraction(scale) * _MAX_DEN), _MAX_DEN)",
         new="frac = Fraction(math.floor(Fraction(scale) * _MAX_DEN), _MAX_DEN)", tests=MECH,
         what="discrete Laplace scale rounded down (less noise than asked)"),
    dict(id="N07", file="dptm/noise/mechanisms.py", old="        frac = Fraction(math.ceil(var * q), q)",
         new="        frac = Fraction(math.floor(var * q), q)", tests=MECH,
         what="discrete Gaussian variance rounded down (less noise than asked)"),
    dict(id="N08", file="dptm/noise/mechanisms.py", old="_cgs.fill_noise(out.reshape(-1), 1, scale,",
         new="_cgs.fill_noise(out.reshape(-1), 1, scale / 2,", tests=MECH,
         what="continuous Laplace at half the scale"),
    dict(id="N09", file="dptm/noise/mechanisms.py", old="_cgs.fill_noise(out.reshape(-1), 2, sigma,",
         new="_cgs.fill_noise(out.reshape(-1), 2, 1.0,", tests=MECH,
         what="continuous Gaussian drawn unscaled (sigma ignored)"),
    dict(id="N10", file="dptm/noise/exact.py", old="    if hi <= p * (1 - rel):",
         new="    if lo <= p * (1 - rel):", tests=MECH,
         what="exact path decides 'below' for an interval that straddles exp(-g)"),
    dict(id="N11", file="dptm/_kernels/cgs_exact.pxi", old="        if _bernoulli_exp(rng.rng, ad * ad / dden, a, den, 1):",
         new="        if True:", tests=MECH,
         what="discrete Gaussian returns its discrete-Laplace proposal without the rejection step"),
    dict(id="N13", file="dptm/_kernels/cgs_exact.pxi", old="    if x < p - LAZY_MARGIN:",
         new="    if x < p + LAZY_MARGIN:", tests=MECH,
         what="lazy Bernoulli(exp) accepts inside the margin instead of deciding exactly"),
    dict(id="N14", file="dptm/_kernels/cgs_exact.pxi", old="            if m == 0:\n                continue\n            return -m",
         new="            return -m", tests=MECH,
         what="table discrete Gaussian: -0 not rejected (P(0) doubled)"),
    dict(id="N15", file="dptm/_kernels/cgs_exact.pxi", old="        if x < T.squeeze[j] - LAZY_MARGIN:",
         new="        if True:", tests=MECH,
         what="table discrete Gaussian accepts every bin proposal (pmf flat within bins)"),
    dict(id="N16", file="dptm/_kernels/cgs_exact.pxi", old="            if not _table_accept(src.rng, T, m, j, <int> (J + 1)):",
         new="            if not _table_accept(src.rng, T, m, j, <int> J):", tests=MECH,
         what="table discrete Gaussian: tail acceptance halved (envelope off by 2)"),
    dict(id="N17", file="dptm/_kernels/cgs_exact.pxi", old="    while T.hi[m + 1] == <int32_t> g and T.lo[m + 1] > v:",
         new="    while T.hi[m + 1] == <int32_t> g and T.lo[m + 1] >= v:", tests=DLAP,
         what="table discrete Laplace: a threshold the low bits do not decide taken as passed "
              "(no exact resolution)"),
    dict(id="N18", file="dptm/_kernels/cgs_exact.pxi", old="    s = <int64_t> (lane & 1)",
         new="    s = <int64_t> ((lane >> 1) & 1)", tests=DLAP,
         what="table discrete Laplace: sign read from an index bit (not independent of |x|)"),
    dict(id="N19", file="dptm/noise/laplace_table.py", old="    num, shift = 1 << (G + L + 22), 0",
         new="    num, shift = 1 << (G + L + 21), 0", tests=DLAP,
         what="table discrete Laplace: thresholds P(|x| >= m) halved (too many zeros: less noise)"),
    dict(id="N20", file="dptm/noise/laplace_table.py", old="        elif big * den >= num << nbits:",
         new="        elif (big + 1) * den >= num << nbits:", tests=DLAP,
         what="table discrete Laplace resolver decides 'not below' for an interval that "
              "straddles T_m"),
    # -- the discrete Gaussian by inversion (SUB-LDA's snapshots; dptm._gauss_inversion) --
    dict(id="GI01", file="dptm/noise/gauss_inversion.py", old="    Fhi[J] = tail\n",
         new="    Fhi[J] = 0\n", tests=GINV,
         what="inversion Gaussian: the tail bound dropped (upper bounds of S_m not guaranteed)"),
    dict(id="GI02", file="dptm/noise/gauss_inversion.py", old="    while J * J * q < 2 * p * P:",
         new="    while J * J * q < p * P:", tests=GINV,
         what="inversion Gaussian: the series truncated where the tail bound does not hold"),
    dict(id="GI03", file="dptm/noise/gauss_inversion.py",
         old="            return m - 1                              # U >= S_m",
         new="            return m                                  # U >= S_m", tests=GINV,
         what="inversion Gaussian: stage 3 / the far tail off by one"),
    dict(id="GI04", file="dptm/_kernels/cgs_exact.pxi", old="            if T.family == 1:",
         new="            if T.family == 2:", tests=GINV,
         what="inversion Gaussian: stage 3 decided on the Laplace thresholds"),
    dict(id="GI05", file="dptm/_kernels/cgs_exact.pxi",
         old='    if table.get("p") != p or table.get("q") != q or "guide" not in table:',
         new='    if "guide" not in table:', tests=GINV,
         what="inversion Gaussian: a table of another variance accepted"),
    dict(id="GI07", file="dptm/noise/gauss_inversion.py", old="            ts.append(t_lo)",
         new="            ts.append(t_lo + (t_lo > 0))", tests=GINV,
         what="inversion Gaussian: thresholds one unit in 2^-76 too high"),
    dict(id="N12", file="dptm/noise/mechanisms.py", old="    per_coord = g if rounded == \"statistic\" else g / 2",
         new="    per_coord = g / 2", tests=MECH,
         what="rounding slack of a rounded statistic taken as g/2 per coordinate (it is g)"),
    # -- reports and releases --------------------------------------------------------------
    dict(id="P01", file="dptm/accounting/report.py", old="        if self.seeded:\n",
         new="        if False:\n", tests=REPORT, what="test-mode line missing from a seeded report"),
    dict(id="P02", file="dptm/accounting/report.py", old='+ ("" if ev.discrete else _NOT_HARDENED))\n    if isinstance(ev, LaplaceEvent)',
         new='+ "")\n    if isinstance(ev, LaplaceEvent)', tests=REPORT,
         what="floating-point Gaussian not labelled as not hardened"),
    dict(id="P03", file="dptm/release.py", old='_NOT_PUBLIC = {"random_state", "verbose", "callback", "n_jobs"}',
         new='_NOT_PUBLIC = {"verbose", "callback", "n_jobs"}', tests=REPORT,
         what="the seed (random_state) published in the release's hyperparameters"),
    # -- accounting --------------------------------------------------------------------------
    dict(id="A01", file="dptm/accounting/rdp.py", old="        return float(r * r / 2.0)",
         new="        return float(r / 2.0)", tests=ACC,
         what="Gaussian RDP with Delta / sigma instead of its square"),
    dict(id="A02", file="dptm/accounting/accountants.py",
         old="        rdp = rdp_subsampled_gaussian(q, event.noise_multiplier, orders)",
         new="        rdp = rdp_subsampled_gaussian(q, event.sigma, orders)", tests=ACC,
         what="subsampled Gaussian RDP with sigma instead of sigma / sensitivity"),
    dict(id="A03", file="dptm/accounting/events.py", old="        return self.sensitivity / self.scale",
         new="        return self.sensitivity / self.scale / 2", tests=ACC,
         what="Laplace pure epsilon halved"),
    dict(id="A04", file="dptm/accounting/accountants.py",
         old="        return _pure_epsilon(event.event)          # gating does not amplify pure DP",
         new="        return event.probability * _pure_epsilon(event.event)", tests=ACC,
         what="pure epsilon of a gated step scaled by its probability (unsound)"),
    dict(id="A05", file="dptm/accounting/rdp.py",
         old="        return np.clip(np.minimum(val, np.minimum(epsilon, a * (epsilon * epsilon) / 2.0)), 0.0, None)",
         new="        return np.clip(np.minimum(val, np.minimum(epsilon, a * (epsilon * epsilon) / 4.0)), 0.0, None)",
         tests=ACC, what="RDP of pure DP capped by alpha eps^2/4 (half the valid bound)"),
    dict(id="A06", file="dptm/accounting/accountants.py",
         old="            eps, _ = amplify_dp_by_subsampling(eps, 0.0, q)",
         new="            eps = eps * q", tests=ACC,
         what="amplification by subsampling of pure DP as eps * q (unsound)"),
    dict(id="Z01", file="dptm/_kernels/svi_zeta.pxi", old="        if diff >= 0.0:", new="        if True:",
         tests=["tests/test_zeta_monotone.py", "tests/test_zeta.py"],
         what="zeta's Newton finish accepts a step that lowers the objective"),
    # -- the audit experiment ----------------------------------------------------------------
    dict(id="L01", file="dptm/attacks/lira.py", old="    tgt.fit(Xv[members])", new="    tgt.fit(Xv[~members])",
         tests=AUDIT, what="audit() trains the target on the non-members"),
    dict(id="L02", file="dptm/attacks/lira.py",
         old="        vocab = np.asarray(X[members].sum(axis=0)).ravel() > 0",
         new="        vocab = np.asarray(X.sum(axis=0)).ravel() > 0", tests=AUDIT,
         what="audit() restricts the vocabulary with all documents instead of the target's"),
    # -- word-level private Gibbs sampling ----------------------------------------------------
    dict(id="G01", file="dptm/noise/releases.py", edits=[
        ("scale = 2.0 / epsilon          # L1", "scale = 1.0 / epsilon          # L1"),
        ("LaplaceEvent(scale=scale, sensitivity=2.0", "LaplaceEvent(scale=scale, sensitivity=1.0")],
         tests=GIBBS, what="snapshot Laplace at half the scale, the event's sensitivity taken as 1 to match"),
    dict(id="G02", file="dptm/_kernels/cgs_snapshot.pxi", edits=[
        # the four-row word-factor pass reads a double copy of the true counts, not the
        # snapshot (the topic totals still come from the snapshot, as in the old G02)
        ("    cdef bint single = not isinstance(bit_generator, list)\n",
         "    cdef bint single = not isinstance(bit_generator, list)\n"
         "    cdef double[:, ::1] true_counts = np.asarray(n_wk, dtype=np.float64)\n"),
        ("_factor_rows(snap_p, wf_p,", "_factor_rows(&true_counts[0, 0], wf_p,"),
        # and so does the pass over the int32 clipped counts (the fit's unreleased snapshots)
        ("_factor_rows(<const int32_t*> cl_p, wf_p,", "_factor_rows(&true_counts[0, 0], wf_p,")],
         tests=GIBBS,
         what="the sweep's word factor built from the true counts instead of the released snapshot"),
    dict(id="G03", file="dptm/_kernels/cgs_snapshot.pxi", old="                        x += scale * random_standard_normal(rng)",
         new="                        x += random_standard_normal(rng)", tests=GIBBS,
         what="Gaussian snapshot noise drawn unscaled"),
    dict(id="G04", file="dptm/models/private_gibbs.py",
         old="                  **topic_attributes(np.maximum(snapshot, 0.0).T + beta)}",
         new="                  **topic_attributes(np.maximum(snapshot, 0.0).T + alpha)}", tests=GIBBS,
         what="components_ built with the document-topic prior instead of the topic-word prior"),
    dict(id="G05", file="dptm/models/private_gibbs.py", old="        corpus = _visiting_order(corpus, order_rng)",
         new="        corpus = corpus", tests=GIBBS,
         what="tokens visited in word-id order (the replaced token moves across the others)"),
    dict(id="G06", file="dptm/_kernels/cgs_snapshot.pxi", edits=[
        ("dptm_clamp(s0[k], clip)", "dptm_clamp(s0[k], 1e308)"),
        ("dptm_clamp(s0[K + k], clip)", "dptm_clamp(s0[K + k], 1e308)"),
        ("dptm_clamp(s0[2 * K + k], clip)", "dptm_clamp(s0[2 * K + k], 1e308)"),
        ("dptm_clamp(s0[3 * K + k], clip)", "dptm_clamp(s0[3 * K + k], 1e308)"),
        ("dptm_clamp(snap[w * K + k], clip)", "dptm_clamp(snap[w * K + k], 1e308)"),
        # the int32 clipped counts of the unreleased snapshots not clipped either
        ("        cmax = <int64_t> ceil(clip)\n", "        cmax = 2147483647\n")],
         tests=GIBBS, what="snapshot not clipped at C in the word factor (eps_I unbounded)"),
    dict(id="G07", file="dptm/accounting/recipes.py", old="    return 2.0 * math.log1p(clip / beta)",
         new="    return math.log1p(clip / beta)", tests=GIBBS + ACC,
         what="inherent epsilon of the sampling step halved"),
    dict(id="G08", file="dptm/models/private_gibbs.py", edits=[
        ('        return fit.report(self._event(noise.event, eps_i, eps_plain, T), "word",',
         "        from ..accounting import PrivacyReport\n"
         '        return PrivacyReport(self._event(noise.event, eps_i, eps_plain, T), "word",')],
         tests=GIBBS, what="a seeded NoisyGibbsLDA's report not marked TEST MODE"),
    # -- session 12: the branch-free true-count updates of private sweeps (review s12)
    dict(id="G09", file="dptm/_kernels/cgs_private_sweep.pxi",
         old="                        memset(&n_wk[w, 0], 0, K * sizeof(int32_t))\n", new="",
         tests=GIBBS + ["tests/test_parallel_gibbs.py"],
         what="by-word pass after a private sweep (K > 128, large buffers, distributed) "
              "never takes a token off its old topic (session 15: the row is counted again "
              "without being cleared): true counts grow, sensitivity unbounded"),
    dict(id="G10", file="dptm/_kernels/cgs_private_sweep.pxi",
         old="                n_wk[w * K + k] -= 1",
         new="                n_wk[w * K + k] -= 0",
         tests=GIBBS, what="in-sweep true-count update never takes a token off its old topic"),
    # -- session 13: GibbsLDA's SparseLDA word bucket in 4 lanes (not privacy: exactness) --
    dict(id="X01", file="dptm/_kernels/cgs_sparse.h",
         old="    last -= (nb + 4 * last == jk) & (wl[2 * jk + 1] == 1);\n", new="",
         tests=["tests/test_parallel_gibbs.py::test_sparse_word_bucket_lanes"],
         what="word search clamped past a lane's end (rounding) can pick the old topic's pair "
              "of weight 0 (count 1)"),
    dict(id="X02", file="dptm/_kernels/cgs_sparse.h",
         old="        cv = _mm_add_epi32(cv, e);                              /* e = -1: count - 1 */",
         new="", tests=["tests/test_parallel_gibbs.py", "tests/test_adlda.py"],
         what="word bucket's full rows count the token being resampled (its old topic not "
              "discounted)"),
    dict(id="X03", file="dptm/_kernels/cgs_sparse.h",
         old="        cv = _mm_and_si128(_mm_add_epi32(cv, e), in);",
         new="        cv = _mm_add_epi32(cv, e);",
         tests=["tests/test_parallel_gibbs.py::test_sparse_word_bucket_lanes"],
         what="word bucket's last row weighs the pairs past the list (the next word's)"),
    dict(id="X04", file="dptm/_kernels/cgs_sparse.h",
         old="(cum[1] <= u) + (cum[2] <= u);", new="(cum[1] <= u) + (cum[2] < u);",
         tests=["tests/test_parallel_gibbs.py::test_sparse_word_bucket_lanes"],
         what="word search: u at lane 3's start searched in lane 2"),
    dict(id="X05", file="dptm/_kernels/cgs_sparse.h",
         old="    wl[2 * ja] = wl[2 * (gone ? n - 1 : ja)];\n    wl[2 * ja + 1] = wl[2 * (gone ? n - 1 : ja) + 1];",
         new="    wl[2 * ja] = wl[2 * ja];\n    wl[2 * ja + 1] = wl[2 * ja + 1];",
         tests=["tests/test_parallel_gibbs.py", "tests/test_adlda.py"],
         what="a word list's emptied pair not replaced by the last (a zero pair kept, the last "
              "pair lost)"),
    # -- PrivateOnlineLDA (VIPS): noise against the ledger, secrets, release -------------
    dict(id="V01", file="dptm/models/svi.py",
         old="release = LatticeGaussianRelease(self._sigma_draw_, self.sensitivity_,",
         new="release = LatticeGaussianRelease(self._sigma_draw_ / self.sensitivity_, "
             "self.sensitivity_,", tests=SVI,
         what="VIPS lattice noise drawn with sigma / sensitivity (the multiplier) as sigma"),
    dict(id="V02", file="dptm/models/svi.py",
         old="release = GaussianRelease(self.sigma_, self.sensitivity_, label=_STAT_LABEL)",
         new="release = GaussianRelease(self.noise_multiplier_, self.sensitivity_, "
             "label=_STAT_LABEL)", tests=SVI,
         what="VIPS floating-point noise drawn with the noise multiplier instead of sigma"),
    dict(id="V03", file="dptm/models/svi.py",
         old="        sigma_c = z * ref                      #",
         new="        sigma_c = z                            #", tests=SVI,
         what="VIPS sigma set to the noise multiplier (sensitivity forgotten), event to match"),
    dict(id="V04", file="dptm/models/svi.py",
         old="            self.sensitivity_ = base_sensitivity + slack",
         new="            self.sensitivity_ = base_sensitivity", tests=SVI,
         what="VIPS lattice rounding slack omitted from the recorded sensitivity"),
    dict(id="V05", file="dptm/models/svi.py",
         old="                base, n_coords = math.sqrt(2.0) * N, K * min(2 * N, V)",
         new="                base, n_coords = math.sqrt(2.0) * N, K * min(N, V)", tests=SVI,
         what="VIPS substitution rounding slack over one document's words, not two"),
    dict(id="V06", file="dptm/models/svi.py",
         old="rows = np.flatnonzero(g.random(D) < q)",
         new="rows = np.flatnonzero(g.random(D) < 2 * q)", tests=SVI,
         what="VIPS samples at twice the rate recorded in the event"),
    dict(id="V07", file="dptm/models/svi.py",
         old="step = PoissonSampledEvent(leaf, q) if q < 1.0 else leaf",
         new="step = PoissonSampledEvent(leaf, q / 2) if q < 1.0 else leaf", tests=SVI,
         what="VIPS event records half the sampling rate used"),
    dict(id="V08", file="dptm/models/svi.py",
         old='discrete=self.mechanism_ == "lattice_gaussian", label=_STAT_LABEL)',
         new="discrete=True, label=_STAT_LABEL)", tests=SVI,
         what="VIPS floating-point Gaussian recorded as discrete (hardened)"),
    dict(id="V09", file="dptm/models/svi.py",
         old="            return private_generator(self.random_state, type(self).__name__)",
         new="            return private_generator(0 if self.random_state is None else "
             "self.random_state, type(self).__name__)", tests=SVI,
         what="VIPS default generator seeded with a constant (replayable noise)"),
    dict(id="V10", file="dptm/models/svi.py",
         old="        elif self.max_doc_length != self._max_doc_length_:",
         new="        elif False:", tests=SVI,
         what="VIPS partial_fit accepts a changed document-length cap"),
    dict(id="V11", file="dptm/models/svi.py",
         old="        if eps > float(self.target_epsilon) * (1 + 1e-9):",
         new="        if False:", tests=SVI,
         what="VIPS paper recipe silently exceeds the target epsilon"),
    # -- PrivateBatchLDA (staged private batch VB) and parallel composition ---------------
    dict(id="B01", file="dptm/models/private_vb.py",
         edits=[("        zs = [z / math.sqrt(w) for w in shares]",
                 "        zs = [z for w in shares]"),
                ("        if _plan_epsilon(zs, delta) <= eps:",
                 "        if True:")], tests=BATCH,
         what="every release calibrated to the whole budget (sequential composition ignored), "
              "the accountant check skipped"),
    dict(id="B08", file="dptm/models/private_vb.py",
         old="            release = LatticeGaussianRelease(sigma, C, g, ledger=fit.ledger)",
         new="            release = LatticeGaussianRelease(sigma / 2, C, g, ledger=fit.ledger)",
         tests=BATCH, what="a release drawn with half its calibrated noise"),
    dict(id="B02", file=_CLIP,
         edits=[("                dptm_lattice_row(row, row, K, scale, a.inv_g)",
                 "                for k in range(K):\n"
                 "                    row[k] = -_lattice_floor(-(row[k] * scale) * a.inv_g)"),
                ("                    lat[k] = _lattice_floor(((row[k] / pdiv) * scale) * a.inv_g)",
                 "                    lat[k] = -_lattice_floor(-((row[k] / pdiv) * scale) * a.inv_g)"),
                ("            out_lattice[w * K + k] += <int64_t> _lattice_floor(x * a.inv_g)",
                 "            out_lattice[w * K + k] += <int64_t> -_lattice_floor(-x * a.inv_g)"),
                ("            if not _lattice_row_ok(lat, K, a.bound, a.limit, &sq):",
                 "            if False:")], tests=BATCH,
         what="contributions rounded up to the lattice (norm above the recorded sensitivity), "
              "the exact norm check disabled"),
    dict(id="B03", file=_CLIP,
         old="        peak if peak < clip else clip)",
         new="        2 * (peak if peak < clip else clip))", tests=BATCH,
         what="contributions clipped to twice the recorded L2 sensitivity"),
    dict(id="B04", file="dptm/accounting/accountants.py",
         old="            return np.maximum.reduce([self._cost(e, q) for e in event.events])",
         new="            return np.minimum.reduce([self._cost(e, q) for e in event.events])",
         tests=BATCH, what="parallel composition accounted as its best part, not its worst"),
    dict(id="B05", file=_CLIP,
         old="        if sq[0] > limit:",
         new="        if sq[0] > limit + 1:",
         tests=["tests/test_private_vb_privacy.py"],
         what="the exact lattice norm check lets a document one unit above the bound through"),
    dict(id="B06", file=_CLIP,
         old="    pdiv = peak if peak > 0.0 else 1.0",
         new="    pdiv = 1.0", tests=["tests/test_private_vb_privacy.py"] + BATCH,
         what="norm taken without the per-document peak division (clip off by its peak)"),
    dict(id="B07", file="dptm/_utils.py",
         old="        X.sum_duplicates()\n    return X\n",
         new="    return X\n", tests=["tests/test_private_vb_privacy.py"],
         what="duplicate CSR entries not merged (sqrt(2) times the sensitivity)"),
]

from mutants_output import MUTANTS as _OUTPUT  # noqa: E402  (the output engineer's mutants)

MUTANTS += _OUTPUT

# -- PrivateBatchLDA's plan: the releases' post-processing, the norm histogram, the search count
_EB = BATCH + ["tests/test_private_vb_denoise.py", "tests/test_private_vb_recorded_sigmas.py",
               "tests/test_private_vb_boundary.py"]
_VB_ALL = _EB + ["tests/test_private_vb_sensitivity.py", "tests/test_private_vb_public_decisions.py"]
MUTANTS += [
    dict(id="B09", file="dptm/models/private_vb.py",
         old="            beta = _post_process(r.post, est, est_sd, eta,",
         new="            beta = _post_process(r.post, stat if r.post == \"final\" else est, est_sd, eta,",
         tests=_EB, what="released topics (EB posterior mean) computed from the un-noised statistic"),
    dict(id="B10", file="dptm/models/private_vb.py",
         old="            beta = _post_process(r.post, est, est_sd, eta,",
         new="            beta = _post_process(r.post, est if r.post == \"final\" else stat, est_sd, eta,",
         tests=_EB, what="topics between releases (the next E-step's) from the un-noised statistic"),
    dict(id="B11", file="dptm/models/vb_denoise.py",
         old="    return slab * np.maximum(s * (u + mills), 0.0)",
         new="    return np.maximum(s * (u + mills), 0.0)",
         tests=_EB, what="EB posterior mean without the posterior slab probability"),
    dict(id="B12", file="dptm/models/vb_denoise.py",
         old="        return _eb_denoise(est, sd, eta)\n",
         new="        return _eb_denoise(est, sd / 2, eta)\n",
         tests=_EB, what="EB release with the wrong noise sd (half the estimate's)"),
    dict(id="B13", file="dptm/models/private_vb.py",
         old="                est, est_sd = _combine_releases(releases[-2:], _COMBINE_THRESHOLD)",
         new="                est, _ = _combine_releases(releases[-2:], _COMBINE_THRESHOLD)",
         tests=_EB, what="an average denoised with the last release's sd, not its own"),
    dict(id="B14", file="dptm/models/private_vb.py",
         old="                est, est_sd = _combine_releases(releases[-2:], _COMBINE_THRESHOLD)",
         new="                est, est_sd = _combine_releases(releases[-2:-1] + [(stat, sd)],"
             " _COMBINE_THRESHOLD)",
         tests=_EB, what="the combination (weights, bias and the mean) reads the un-noised "
                         "statistic"),
    dict(id="B15", file=_CLIP,
         old="        if not (_c_fabs(m[k]) <= bound):\n            return False\n", new="",
         tests=_EB, what="exact lattice norm check lets NaN / inf / over-range contributions "
                         "through (int64 wrap-around)"),
    dict(id="B16", file="dptm/models/vb_denoise.py",
         old="            out[k] = np.where(est[k] > 3 * sigma, est[k], 0.0)",
         new="            pass",
         tests=_EB, what="EB fail-safe keeps a non-finite posterior mean in the release"),
    dict(id="B18", file="dptm/models/vb_denoise.py",
         old="    keep = 1.0 - 1.0 / np.maximum(ratio, 1.0)",
         new="    keep = 1.0 - 1.0 / np.maximum(ratio, 1e-300)",
         tests=_EB, what="James-Stein factor not clipped at 0 (noise-only words flipped)"),
    dict(id="B19", file="dptm/models/private_vb.py",
         old="    if public_start and eps < _START_SEARCH_MIN_EPSILON:\n",
         new="    if False:\n",
         tests=_EB, what="public init_topics followed by the random start's noisy searches"),
    dict(id="B21", file="dptm/models/vb_denoise.py",
         old="        return eta + np.where(est > _SHRUNK_SEARCH_THRESHOLD * sd, _word_shrunk(est, sd)[0], 0.0)",
         new="        return eta + np.where(_word_shrunk(est, sd)[0] > _SHRUNK_SEARCH_THRESHOLD * sd,"
             " _word_shrunk(est, sd)[0], 0.0)",
         tests=_EB, what="the kept entries chosen on the shrunk values (noise-only words' "
                         "spread lost) instead of the raw release"),
    dict(id="B22", file="dptm/models/private_vb.py",
         old="    middle = \"shrunk-threshold\" if eps >= _SHRUNK_MIN_EPSILON else \"threshold\"",
         new="    middle = \"shrunk-threshold\"",
         tests=_EB, what="search releases shrunk below the epsilon where it was measured"),
    dict(id="B26", file="dptm/models/vb_denoise.py",
         old="        return eta + np.where(est > _SHRUNK_SEARCH_THRESHOLD * sd, _word_shrunk(est, sd)[0], 0.0)",
         new="        return eta + np.where(est > _SEARCH_THRESHOLD * sd, _word_shrunk(est, sd)[0], 0.0)",
         tests=_EB, what="the shrunk search releases cut at the hard threshold's 2 sd"),
    dict(id="B23", file="dptm/models/private_vb.py",
         old="(r.post == \"final\" or (random_plan and len(releases) >= 3))",
         new="(r.post == \"final\")",
         tests=_EB, what="search releases not averaged with the one before"),
    dict(id="B25", file="dptm/models/private_vb.py",
         old="    return init is None or (schedule is None and plan[-1].post == \"final\")",
         new="    return True",
         tests=_EB, what="the random start's fit prior and averaging after public init_topics "
                         "(one release, or a given schedule)"),
    dict(id="B31", file=_CLIP,
         old="            if not _lattice_row_ok(lat, K, a.bound, a.limit, &sq):\n                return 0\n",
         new="            if not _lattice_row_ok(lat, K, a.bound, a.limit, &sq):\n                pass\n",
         tests=_VB_ALL,
         what="the exact lattice norm check's verdict ignored (the last line of defence)"),
    dict(id="B33", file="dptm/models/private_vb.py",
         old="    n = int(min(_MAX_SEARCHES, max(3, math.floor((1 - _FINAL_SHARE) * (_SEARCH_Z / z) ** 2))))",
         new="    n = 4",
         tests=BATCH, what="the search count not set by the noise rule"),
    dict(id="B34", file="dptm/models/private_vb.py",
         old="    return np.bincount(np.clip(b, 0, n - 1), minlength=n).astype(np.float64)[None, :]",
         new="    return 2 * np.bincount(np.clip(b, 0, n - 1), minlength=n).astype(np.float64)[None, :]",
         tests=_VB_ALL, what="the norm histogram counts a document twice (sensitivity 2, "
                             "accounted as 1)"),
    dict(id="B35", file="dptm/models/private_vb.py",
         old="                release = LatticeGaussianRelease(r.z, 1.0, 1.0, ledger=fit.ledger)",
         new="                release = LatticeGaussianRelease(r.z, 1e-3, 1.0, ledger=fit.ledger)",
         tests=_VB_ALL, what="the histogram release accounted at a sensitivity below its 1"),
    dict(id="B36", file="dptm/models/private_vb.py",
         old="                C, n_docs = clip_bound(noisy, release.sigma_, [m.z for m in model], K, V)",
         new="                C, n_docs = clip_bound(hist, release.sigma_, [m.z for m in model], K, V)",
         tests=_VB_ALL, what="the clip bound from the un-noised norm histogram"),
    dict(id="B37", file="dptm/models/private_vb.py",
         old="                C, n_docs = clip_bound(noisy, release.sigma_, [m.z for m in model], K, V)\n",
         new="                C, n_docs = clip_bound(noisy, release.sigma_, [m.z for m in model], K, V)\n"
             "                n_docs = float(hist.sum())\n",
         tests=_VB_ALL, what="the fit's warning reads the true document count"),
    dict(id="B38", file="dptm/models/private_vb.py",
         old="    z2 = float(np.mean(zs * zs))\n",
         new="    z2 = float(zs[-1] ** 2)\n",
         tests=["tests/test_private_vb.py"],
         what="the clip bound traded against the final release's noise alone (not every "
              "release's)"),
    # -- session 13: GibbsLDA's sparse AD-LDA rounds edit word lists through positions (not
    # privacy code: a wrong list is a wrong non-private fit, caught by the same tests)
    dict(id="W03", file="dptm/_kernels/cgs_sparse.h",
         old="            if (prow != NULL) {\n                prow[b] = (int32_t) n;\n            }\n",
         new="", tests=["tests/test_adlda.py"],
         what="a list edit (sampler or exchanged move) appends a topic without its position"),
    dict(id="W04", file="dptm/_kernels/cgs_sparse.h",
         old="    if (prow != NULL && gone) {\n        prow[wl[2 * ja]] = (int32_t) ja;\n    }\n",
         new="", tests=["tests/test_adlda.py"],
         what="a list edit empties a topic, moving the last pair without its position"),
    dict(id="W05", file="dptm/_kernels/cgs_adlda.pxi", old="                prow[wl[2 * t]] = <int32_t> t",
         new="                prow[wl[2 * t]] = <int32_t> 0", tests=["tests/test_adlda.py"],
         what="the positions of freshly built word lists not written"),
    dict(id="W06", file="dptm/_kernels/cgs_adlda.pxi", old="    return ws.old if p == 0 else ws.wk[p]",
         new="    return ws.wk[1]", tests=["tests/test_adlda.py"],
         what="two parts share one positions array"),
    dict(id="W07", file="dptm/_kernels/cgs_sparse.h", old="if (jb >= n || wl[2 * jb] != b) jb = n;",
         new="if (jb >= n) jb = n;", tests=["tests/test_adlda.py"],
         what="the sampler takes a topic new to the word (document or smoothing bucket) as "
              "in its list wherever its stale position points"),
    # -- session 14: the private sweep owes the previous draw's count (an entry of its own
    # after the document's list) and puts a document's counts back at its end (exactness)
    dict(id="S01", file="dptm/_kernels/cgs_private_sweep.pxi",
         old="        if jp[0] == n_nz:\n            jp[0] = jk\n", new="",
         tests=GIBBS + ["tests/test_parallel_gibbs.py"],
         what="the owed count not moved with the list's last entry when an emptied topic "
              "leaves the list (paid to a padding entry)"),
    dict(id="S02", file="dptm/_kernels/cgs_private_sweep.pxi",
         old="        q = q + <double> frow[nz[jp]] * owed\n", new="",
         tests=GIBBS + ["tests/test_parallel_gibbs.py"],
         what="the document bucket leaves out the count the previous draw added"),
    dict(id="S03", file="dptm/_kernels/cgs_private_sweep.pxi",
         old="        cnt[jp] += owed                         # paid (the address is known early)\n",
         new="", tests=GIBBS + ["tests/test_parallel_gibbs.py"],
         what="an owed count never paid (the drawn topics' counts lost)"),
    dict(id="S04", file="dptm/_kernels/cgs_private_sweep.pxi",
         old="            j = j if j < n_nz else jp\n", new="            j = j if j < n_nz else n_nz - 1\n",
         tests=GIBBS + ["tests/test_parallel_gibbs.py"],
         what="a draw of the owed entry gives the list's last topic"),
    dict(id="S05", file="dptm/_kernels/cgs_private_sweep.h",
         old="    a ^= (a ^ b) & (0 - (uint64_t) (same == 0));\n", new="    a = b;\n",
         tests=GIBBS + ["tests/test_parallel_gibbs.py"],
         what="a token leaving the topic it is owed a count for takes it off the list's "
              "count too, the owed count dropped (one count lost)"),
    # -- session 16: every token resampled, the next token of the document leaves its topic
    # right after this draw, told by three running sums whether it cancels the owed count
    dict(id="S06", file="dptm/_kernels/cgs_private_sweep.pxi",
         old="                    hit = dptm_draws(cum, jk, n_nz, u, jk == jp)\n",
         new="                    hit = False\n",
         tests=GIBBS + ["tests/test_parallel_gibbs.py"],
         what="the next token never cancels the count owed to its own entry (taken off and "
              "owed at once: an emptied entry leaves the list with a count still owed)"),
    dict(id="S07", file="dptm/_kernels/cgs_private_sweep.h",
         old="    return (((cum[a] <= u) | (nx == 0)) & (u < cum[nx]))\n",
         new="    return ((cum[a] <= u) & (u < cum[nx]))\n",
         tests=GIBBS + ["tests/test_parallel_gibbs.py"],
         what="a draw of the list's first entry never seen as the next token's entry"),
    # -- session 15: where every sweep follows a snapshot, the snapshot counts the rows
    # from the topics (the sweep leaves n_wk stale)
    dict(id="C01", file="dptm/_kernels/cgs_snapshot.pxi",
         old="                        memset(myrow, 0, K * sizeof(int32_t))\n", new="",
         tests=GIBBS + ["tests/test_parallel_gibbs.py"],
         what="the snapshot's recounted row not cleared: each row holds the counts of every "
              "earlier row of its thread too (sensitivity unbounded)"),
    dict(id="C02", file="dptm/models/private_gibbs.py",
         old=" " * 39 + "word_blocks=sweep.word_blocks, clipped=clip_buf,\n"
             + " " * 39 + "recount=sweep.recount(state))",
         new=" " * 39 + "word_blocks=sweep.word_blocks, clipped=clip_buf,\n"
             + " " * 39 + "recount=None if type(self).__name__ == 'NoisyGibbsLDA' "
             "else sweep.recount(state))",
         tests=GIBBS + ["tests/test_parallel_gibbs.py"],
         what="NoisyGibbsLDA's snapshots from the counts the recounting sweeps leave stale "
              "(the initial topics' counts)"),
    dict(id="C03", file="dptm/models/private_gibbs.py",
         old=" " * 39 + "word_blocks=sweep.word_blocks, clipped=clip_buf,\n"
             + " " * 39 + "recount=sweep.recount(state))",
         new=" " * 39 + "word_blocks=sweep.word_blocks, clipped=clip_buf,\n"
             + " " * 39 + "recount=None if type(self).__name__ == 'SubsampledGibbsLDA' "
             "else sweep.recount(state))",
         tests=GIBBS + ["tests/test_parallel_gibbs.py"],
         what="SubsampledGibbsLDA's snapshots from the counts the recounting sweeps leave "
              "stale"),
    # -- session 15 review (rev15): the recount path and the eight-release default
    dict(id="Q01", file="dptm/_kernels/cgs_snapshot.pxi",
         old="                        crow = myrow\n", new="",
         tests=GIBBS + ["tests/test_parallel_gibbs.py", "tests/test_private_gibbs_recount.py"],
         what="the recounting snapshot draws its noise around n_wk (stale in a recounting "
              "fit) instead of the row it counted from the topics"),
    dict(id="Q02", file="dptm/models/private_gibbs.py",
         old=" " * 39 + "word_blocks=sweep.word_blocks, clipped=clip_buf,\n"
             + " " * 39 + "recount=sweep.recount(state))",
         new=" " * 39 + "word_blocks=sweep.word_blocks, clipped=clip_buf,\n"
             + " " * 39 + "recount=sweep.recount(state) if trace is None or "
             "type(self).__name__ != 'NoisyGibbsLDA' else None)",
         tests=GIBBS + ["tests/test_parallel_gibbs.py", "tests/test_private_gibbs_recount.py"],
         what="NoisyGibbsLDA's traced fits (double snapshots) read the stale counts"),
    dict(id="Q03", file="dptm/models/private_gibbs.py",
         old=" " * 39 + "word_blocks=sweep.word_blocks, clipped=clip_buf,\n"
             + " " * 39 + "recount=sweep.recount(state))",
         new=" " * 39 + "word_blocks=sweep.word_blocks, clipped=clip_buf,\n"
             + " " * 39 + "recount=sweep.recount(state) if trace is None or "
             "type(self).__name__ != 'SubsampledGibbsLDA' else None)",
         tests=GIBBS + ["tests/test_parallel_gibbs.py", "tests/test_private_gibbs_recount.py"],
         what="SubsampledGibbsLDA's traced fits (double snapshots) read the stale counts"),
    dict(id="Q04", file="dptm/models/private_gibbs.py",
         old=" " * 39 + "word_blocks=sweep.word_blocks, clipped=clip_buf,\n"
             + " " * 39 + "recount=sweep.recount(state))",
         new=" " * 39 + "word_blocks=sweep.word_blocks, clipped=clip_buf,\n"
             + " " * 39 + "recount=sweep.recount(state) if getattr(self, 'convergence_tol', "
             "None) is None else None)",
         tests=GIBBS + ["tests/test_parallel_gibbs.py", "tests/test_private_gibbs_recount.py"],
         what="SubsampledGibbsLDA's fits with the stopping rule read the stale counts"),
    dict(id="Q05", file="dptm/noise/releases.py",
         old="            parts.append(SelfComposedEvent(ev, j - i + 1) if j > i else ev)",
         new="            parts.append(SelfComposedEvent(ev, j - i) if j > i else ev)",
         tests=_VB_ALL + ["tests/test_private_vb_privacy.py", "tests/test_releases.py",
                          "tests/test_private_vb_recorded_sigmas.py"],
         what="a run of equal releases accounted one short in the report (the ledger's "
              "composition; the plan's calibration is a zCDP split, checked afterwards)"),
    # -- the release objects and their ledger (dptm/noise/releases.py)
    dict(id="K01", file="dptm/noise/releases.py",
         old="        if len(self.events) > count or any(ev != planned for ev in self.events):",
         new="        if len(self.events) > count + 1:",
         tests=["tests/test_releases.py"] + GIBBS,
         what="a planned report accepted although it covers neither the noise nor the "
              "number of releases drawn"),
    dict(id="K02", file="dptm/models/_private_base.py",
         old="            wrapped = private_fit(fit)\n", new="            wrapped = fit\n",
         tests=["tests/test_failed_fit_forgets_secrets.py"],
         what="the private-model base does not wrap fit: a failed fit keeps its secrets in "
              "the traceback and stays fitted"),
    dict(id="K03", file="dptm/models/_private_base.py",
         old="            _charge_failed_fit(type(self).__name__, fit, exc)\n",
         new="            pass\n",
         tests=["tests/test_selection.py"],
         what="a fit that raises after drawing releases is not charged to the budget"),
    dict(id="K04", file="dptm/models/private_vb.py",
         old="        fit.adjacency = unit ", new="        fit.adjacency = 'document' ",
         tests=["tests/test_selection.py"],
         what="a failed user-level fit is charged at document level"),
    dict(id="Q06", file="dptm/models/private_vb.py",
         old="            release = LatticeGaussianRelease(sigma, C, g, ledger=fit.ledger)",
         new="            release = LatticeGaussianRelease(sigma, 1.0, g, ledger=fit.ledger)",
         tests=_VB_ALL + ["tests/test_private_vb_privacy.py"],
         what="the report's releases at sensitivity 1 whatever clip_norm (understated for "
              "clip_norm > 1)"),
    # -- session 16: the last search releases' posterior means and the fit's E-step prior
    # (post-processing and the per-document function: a wrong one is a wrong fit, not a
    # privacy loss; the E-step re-derivation must see it)
    dict(id="Q07", file="dptm/models/private_vb.py",
         old="    return (\"shrink\",) + (middle,) * (n - 3) + (\"posterior-mean\",) * 2",
         new="    return (\"shrink\",) + (middle,) * (n - 2) + (\"posterior-mean\",) * 1",
         tests=["tests/test_private_vb_boundary.py", "tests/test_private_vb_public_decisions.py"],
         what="one search release fewer post-processed by the posterior mean"),
    dict(id="Q08", file="dptm/models/private_vb.py",
         old="        if self.doc_topic_prior is None and _random_plan(plan, init, self.schedule) \\",
         new="        if _random_plan(plan, init, self.schedule) \\",
         tests=["tests/test_private_vb_boundary.py"],
         what="the fit's E-step prior overrides a doc_topic_prior the user gave"),
]

# -- the second privacy review's mutants (finding 7's survivors, finding 3's five) and
# variants of them, against the tests written for their classes of bugs
SECRETS = ["tests/test_secrets_by_value.py"]
STREAMS = ["tests/test_stream_independence.py"]
CROSS = ["tests/test_accounting_crosscheck.py"]
BOUNDARY = ["tests/test_release_load_hostile.py"]
TOPICDP_ORDER = ["tests/test_topicdp.py::test_topicdp_rows_are_in_a_random_order_as_reported"]
MUTANTS += [
    dict(id="R2-01", file="dptm/models/private_gibbs.py",
         old='    return [np.random.Generator(AESCounter(key=int.from_bytes(gen.bytes(16), "little")))\n'
             "            for _ in range(n)]",
         new='    key = int.from_bytes(gen.bytes(16), "little")\n'
             "    return [np.random.Generator(AESCounter(key=key)) for _ in range(n)]",
         tests=STREAMS, what="every child generator keyed with ONE key (order, init, noise and "
                             "sweep streams identical, every block of snapshot rows the same noise)"),
    dict(id="R2-02", file="dptm/distributed.py",
         old="    keys = [(k_order, k_init, k_sweep)] + [(_key(gen), _key(gen), _key(gen)) for _ in range(P - 1)]",
         new="    keys = [(k_order, k_init, k_sweep)] * P",
         tests=STREAMS, what="every Dask partition reuses partition 0's stream keys"),
    dict(id="R2-03", file="dptm/accounting/rdp.py", old="    eps = sensitivity / scale\n",
         new="    eps = 1.0 / scale\n", tests=CROSS,
         what="the Laplace RDP ignores the L1 sensitivity (sensitivity 2 accounted as 1)"),
    dict(id="R2-04", file="dptm/accounting/pld.py",
         old="            return ev.GaussianDpEvent(event.noise_multiplier)",
         new="            return ev.GaussianDpEvent(event.sigma)", tests=CROSS,
         what="the PLD route given sigma instead of sigma / sensitivity"),
    dict(id="R2-05", file="dptm/accounting/events.py",
         old="            walk(e.event, c, q * e.sampling_probability, label)",
         new="            walk(e.event, c, e.sampling_probability, label)", tests=CROSS,
         what="nested Poisson rates not multiplied in the report's leaves"),
    dict(id="R2-06", file="dptm/release.py",
         old="            if info.file_size > limit:",
         new="            if info.file_size > limit and False:",
         tests=BOUNDARY,
         what="Release.load inflates a member whatever size it declares (a zip bomb read)"),
    dict(id="R2-07", file="dptm/release.py",
         old="        if not np.all(np.isfinite(tw)) or tw.min() < 0 or np.any(tw.sum(axis=1) <= 0):",
         new="        if not np.all(np.isfinite(tw)) or np.any(tw.sum(axis=1) <= 0):",
         tests=BOUNDARY, what="negative topic-word entries accepted (on load too)"),
    dict(id="R2-08", file="dptm/models/private_gibbs.py",
         old="            return plan.noise.snapshot(state.n_wk, clip, beta, noise_gens,",
         new="            return plan.noise.snapshot(state.n_wk, clip if clip_buf is None "
             "else 2.0 ** 30, beta, noise_gens,",
         tests=STREAMS, what="the unreleased snapshots (int32 clipped buffer) not clipped at C"),
    dict(id="R2-09", file="dptm/models/private_gibbs.py",
         old="        eps_i = inherent_epsilon(clip, beta)\n"
             "        eps_plain = plain_sweep_epsilon(shape[2], beta)",
         new="        eps_i = inherent_epsilon(clip, self.doc_topic_prior_)\n"
             "        eps_plain = plain_sweep_epsilon(shape[2], beta)",
         tests=CROSS, what="eps_I computed with alpha instead of beta (equal at the 1/K defaults)"),
    dict(id="R2-10", file="dptm/models/topicdp.py", old="        perm = noise_gen.permutation(m)\n",
         new="        perm = np.arange(m)\n        noise_gen.permutation(m)\n", tests=TOPICDP_ORDER,
         what="TopicDP's rows not permuted although the report says so"),
    dict(id="R2-11", file="dptm/distributed.py",
         old="    new = part.copy()\n    if new.block_ptr.size < 2:",
         new="    new = part\n    if new.block_ptr.size < 2:", tests=STREAMS,
         what="a Gibbs sweep task mutates its input (a retried task replays other draws)"),
    dict(id="R2-12", file="dptm/guardrails.py",
         old='    if report.adjacency in ("document", "document-replace") and "documents" in found:',
         new='    if report.adjacency == "document" and "documents" in found:', tests=CROSS,
         what="the delta >= 1/n guardrail skipped for replace-one adjacency"),
    # finding 3: secrets in the estimator (PrivateBatchLDA)
    dict(id="R2-13", file="dptm/models/private_vb.py",
         old='        gen = fit.generator\n',
         new='        gen = fit.generator\n'
             '        self._aes = (gen.bit_generator.state["s"]["seed"].copy(),\n'
             '                     gen.bit_generator.state["s"]["counter"].copy())\n',
         tests=SECRETS, what="the AES generator's key and counter kept on the estimator as "
                             "plain arrays"),
    dict(id="R2-14", file="dptm/models/private_vb.py",
         old="        X = check_count_matrix(X, estimator=self, reset=True).tocsr()\n",
         new="        X = check_count_matrix(X, estimator=self, reset=True).tocsr()\n"
             "        self._n_docs = X.shape[0]\n",
         tests=SECRETS, what="the document count kept as _n_docs"),
    dict(id="R2-15", file="dptm/models/private_vb.py",
         old="        privacy = fit.report(\n",
         new="        from ..accounting import PrivacyReport\n        privacy = PrivacyReport(\n",
         tests=SECRETS,
         what="a seeded report without its TEST MODE line"),
    dict(id="R2-16", file="dptm/models/private_vb.py",
         old="        threads = effective_n_jobs(self.n_jobs)\n        if groups is not None:",
         new="        threads = effective_n_jobs(self.n_jobs)\n"
             "        if self.verbose:\n"
             "            import logging\n"
             "            logging.getLogger('dptm').debug('fitting %d documents, %d tokens', "
             "X.shape[0], X.sum())\n"
             "        if groups is not None:",
         tests=SECRETS, what="a verbose log line with the document and token counts"),
    dict(id="R2-17", file="dptm/models/private_vb.py",
         edits=[("        return self._fit_releases(X.shape[1], lambda beta, alpha, C, g, presence: "
                 "(\n            _expected_counts(X",
                 "        return self._fit_releases(X.shape[1], n_true=X.shape[0], statistic=lambda "
                 "beta, alpha, C, g, presence: (\n            _expected_counts(X"),
                ("    def _fit_releases(self, V, statistic, unit=\"document\"):",
                 "    def _fit_releases(self, V, statistic, unit=\"document\", n_true=None):"),
                ("        plan = fit_plan(self.target_epsilon, self.target_delta, K, V, self.schedule, C,",
                 "        plan = fit_plan(self.target_epsilon if n_true is None or n_true >= 500 else "
                 "min(self.target_epsilon, 3.9), self.target_delta, K, V, self.schedule, C,")],
         tests=SECRETS, what="the number of search releases chosen from the number of "
                             "documents (schedule, sigmas and report then depend on D)"),
    # variants
    dict(id="R2-18", file="dptm/models/private_vb.py",
         old='        gen = fit.generator\n',
         new='        gen = fit.generator\n'
             "        self._state = gen.bit_generator.state\n",
         tests=SECRETS, what="the generator's state dict kept on the estimator"),
    dict(id="R2-19", file="dptm/models/private_gibbs.py",
         old="    return [g.bit_generator for g in _child_generators(noise_rng, -(-n_words // rows))]",
         new="    return [g.bit_generator for g in _child_generators(noise_rng, 1)] * (-(-n_words // rows))",
         tests=STREAMS, what="every block of snapshot rows draws from one shared stream"),
    dict(id="R2-20", file="dptm/models/private_gibbs.py",
         old="        gens = [g.bit_generator for g in _child_generators(sweep_rng, block_ptr.size - 1)]",
         new="        gens = [g.bit_generator for g in _child_generators(sweep_rng, 1)] * (block_ptr.size - 1)",
         tests=STREAMS, what="every block of documents sweeps from one shared stream"),
    dict(id="R2-21", file="dptm/accounting/pld.py",
         old="            return ev.LaplaceDpEvent(event.noise_multiplier)",
         new="            return ev.LaplaceDpEvent(event.scale)", tests=CROSS,
         what="the PLD route of Laplace ignores the L1 sensitivity"),
    dict(id="R2-22", file="dptm/models/private_gibbs.py",
         old="        order_rng, init_rng, noise_rng, sweep_rng = _child_generators(fit.generator, 4)\n",
         new="        order_rng, init_rng, noise_rng, sweep_rng = _child_generators(fit.generator, 4)\n"
             "        self._noise_key = noise_rng.bit_generator.state['s']['seed'][:2].astype(np.int64)\n",
         tests=SECRETS, what="a Gibbs model keeps its noise stream's key (as an int64 array)"),
    # beyond the review's list: the same class in PrivateOnlineLDA
    dict(id="R2-23", file="dptm/models/svi.py",
         old="        step_rngs = spawn_generators(step_parent, T)",
         new="        step_rngs = spawn_generators(step_parent, 1) * T", tests=STREAMS,
         what="every VIPS minibatch step (its Poisson sample and noise) from one stream"),
]

# -- the local randomizers' failure path (a failed call keeps no secret in its traceback)
FORGET = ["tests/test_failed_fit_forgets_secrets.py"]
MUTANTS += [
    dict(id="D01", file="dptm/noise/local_randomizers.py",
         old="@private_fit(reset=False)\ndef randomize(doc,", new="def randomize(doc,",
         tests=FORGET, what="randomize's failure traceback keeps its generator and the flips"),
    dict(id="D02", file="dptm/noise/local_randomizers.py",
         old="@private_fit(reset=False)\ndef randomize_matrix(", new="def randomize_matrix(",
         tests=FORGET,
         what="randomize_matrix's failure traceback keeps its generator and the flips"),
    dict(id="D03", file="dptm/noise/secret.py",
         old="                _forget_frames(exc, outer)\n", new="",
         tests=FORGET, what="a failing private fit's frames keep their locals (the secrets)"),
]

# -- the empirical-Bayes fit's analytic gradient (PrivateBatchLDA's denoising)
MUTANTS += [
    dict(id="EB01", file="dptm/models/vb_denoise.py",
         old="(1.0 + (lam * s) ** 2 - lam * y - lam * s * mills)",
         new="(1.0 + (lam * s) ** 2 - lam * y + lam * s * mills)", tests=_EB,
         what="the slab-mean gradient of the EB fit with a wrong sign in its Mills-ratio term "
              "(the fit stops away from the likelihood maximum)"),
    dict(id="EB02", file="dptm/models/vb_denoise.py",
         old="grad = np.array([-float((r1 - p).sum()),",
         new="grad = np.array([float((r1 - p).sum()),", tests=_EB,
         what="the EB fit's gradient in logit p with the wrong sign"),
    # the batched fit (_eb_fit_rows) that _eb_denoise uses
    dict(id="EB03", file="dptm/models/vb_denoise.py",
         old="        g[i:j, 1] = E(r1, g1)", new="        g[i:j, 1] = -E(r1, g1)", tests=_EB,
         what="the batched EB fit's slab-mean gradient with the wrong sign (Newton fails, the "
              "BFGS fallback stops short on near-empty topics)"),
    dict(id="EB04", file="dptm/models/vb_denoise.py",
         old="& (mean > 0))", new="& (mean < 0))", tests=_EB,
         what="the second start of the batched EB fit on the wrong near-empty topics (those "
              "with a negative mean, where the slab-everywhere maximum cannot be)"),
    dict(id="EB05", file="dptm/models/vb_denoise.py",
         old="        better = conv2 & (f2 < f[weak])", new="        better = conv2 & (f2 > f[weak])",
         tests=_EB, what="the batched EB fit keeps the worse of its two starts"),
]

# -- the E-step's update cap of PrivateBatchLDA's statistic (vb_statistic._DOC_UPDATES)
_CAP = ["tests/test_private_vb.py", "tests/test_distributed.py"]
MUTANTS += [
    dict(id="VS02", file="dptm/models/vb_statistic.py",
         old="_DOC_UPDATES = 50", new="_DOC_UPDATES = 25", tests=_CAP,
         what="the E-step cap halved (the fit no longer the documented one; heavy-tailed "
              "corpora lose the longer E-step their long documents need)"),
]
