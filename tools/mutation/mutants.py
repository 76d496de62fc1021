"""The documented mutants of privacy-relevant code (see run.py).

Each mutant: ``id``; ``file``; ``old``, an exact substring occurring once; ``new``, its
replacement; ``tests``, the test files (or node ids) run against it; ``what``, the bug it
models. ``equivalent`` (optional) explains why a survivor is harmless.
"""

MECH = ["tests/test_mechanisms.py", "tests/test_secret_randomness.py", "tests/test_empirical_dp.py"]
ACC = ["tests/test_accounting_primitives.py", "tests/test_accounting_accountants.py",
       "tests/test_accounting_soundness.py", "tests/test_accounting_recipes.py"]
AUDIT = ["tests/test_audit_experiment.py", "tests/test_lira.py"]
REPORT = ["tests/test_release.py", "tests/test_secret_randomness.py"]

MUTANTS = [
    # -- the secret noise source -------------------------------------------------------
    dict(id="R01", file="dptm/_random.py", old='os.urandom(16), "little"', new='bytes(16), "little"',
         tests=MECH, what="secret generator keyed with a constant instead of OS entropy"),
    dict(id="R02", file="dptm/_random.py", old="        return secret_generator(), False",
         new="        return np.random.Generator(AESCounter(seed=0)), False",
         tests=MECH, what="default (unseeded) private generator is a fixed-seed generator"),
    dict(id="R03", file="dptm/_random.py", old="SeededPrivacyWarning, stacklevel=3",
         new="UserWarning, stacklevel=3", tests=MECH,
         what="seeded test mode not flagged with SeededPrivacyWarning"),
    dict(id="R04", file="dptm/_random.py", old="    return gen, True", new="    return gen, False",
         tests=MECH, what="seeded test mode reported as secret"),
    dict(id="R05", file="dptm/_cgs.pyx", old="j = <Py_ssize_t> random_interval(rng, <uint64_t> i)",
         new="j = <Py_ssize_t> random_interval(rng, <uint64_t> i - 1)", tests=MECH,
         what="token shuffle is Sattolo's (cyclic permutations only), not uniform"),
    dict(id="R06", file="dptm/_random.py", old='    return int.from_bytes(os.urandom(8), "little") >> 1',
         new="    return 12345", tests=MECH, what="public seed constant (fold-in streams shared)"),
    # -- exact noise ---------------------------------------------------------------------
    dict(id="N01", file="dptm/mechanisms.py", old="    return base + noise * g, g, g * discrete_gaussian_parameters",
         new="    return base + noise * g / 2, g, g * discrete_gaussian_parameters", tests=MECH,
         what="lattice Gaussian adds half the noise it reports"),
    dict(id="N02", file="dptm/mechanisms.py", old="    noise = discrete_laplace_noise(base.shape, scale / g, rng)",
         new="    noise = discrete_laplace_noise(base.shape, scale / g / 2, rng)", tests=MECH,
         what="lattice Laplace draws half the scale it reports"),
    dict(id="N03", file="dptm/mechanisms.py", old="    k = np.rint(x / g)", new="    k = x / g",
         tests=MECH, what="statistic not rounded to the lattice (input low bits leak)"),
    dict(id="N04", file="dptm/mechanisms.py", old="        return g / 2 * math.sqrt(int(n_coords))",
         new="        return g / 4 * math.sqrt(int(n_coords))", tests=MECH,
         what="L2 rounding slack understated"),
    dict(id="N05", file="dptm/mechanisms.py",
         old="    g = math.ldexp(1.0, math.frexp(scale)[1] - 1 - _LATTICE_STEPS)",
         new="    g = math.ldexp(1.0, math.frexp(scale)[1] - 1 - 2)", tests=MECH,
         what="lattice far too coarse (rounding comparable to the noise)"),
    dict(id="N06", file="dptm/mechanisms.py", old="frac = Fraction(math.ceil(Fraction(scale) * _MAX_DEN), _MAX_DEN)",
         new="frac = Fraction(math.floor(Fraction(scale) * _MAX_DEN), _MAX_DEN)", tests=MECH,
         what="discrete Laplace scale rounded down (less noise than asked)"),
    dict(id="N07", file="dptm/mechanisms.py", old="        frac = Fraction(math.ceil(var * q), q)",
         new="        frac = Fraction(math.floor(var * q), q)", tests=MECH,
         what="discrete Gaussian variance rounded down (less noise than asked)"),
    dict(id="N08", file="dptm/mechanisms.py", old="_cgs.fill_noise(out.reshape(-1), 1, scale,",
         new="_cgs.fill_noise(out.reshape(-1), 1, scale / 2,", tests=MECH,
         what="continuous Laplace at half the scale"),
    dict(id="N09", file="dptm/mechanisms.py", old="_cgs.fill_noise(out.reshape(-1), 2, sigma,",
         new="_cgs.fill_noise(out.reshape(-1), 2, 1.0,", tests=MECH,
         what="continuous Gaussian drawn unscaled (sigma ignored)"),
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
    dict(id="A01", file="dptm/accounting/rdp.py", old="    return a * sensitivity ** 2 / (2.0 * sigma ** 2)",
         new="    return a * sensitivity / (2.0 * sigma ** 2)", tests=ACC,
         what="Gaussian RDP with sensitivity instead of its square"),
    dict(id="A02", file="dptm/accounting/accountants.py",
         old="        return rdp_subsampled_gaussian(q, event.noise_multiplier, orders)",
         new="        return rdp_subsampled_gaussian(q, event.sigma, orders)", tests=ACC,
         what="subsampled Gaussian RDP with sigma instead of sigma / sensitivity"),
    dict(id="A03", file="dptm/accounting/events.py", old="        return self.sensitivity / self.scale",
         new="        return self.sensitivity / self.scale / 2", tests=ACC,
         what="Laplace pure epsilon halved"),
    dict(id="A04", file="dptm/accounting/accountants.py",
         old="        return _pure_epsilon(event.event)          # gating does not amplify pure DP",
         new="        return event.probability * _pure_epsilon(event.event)", tests=ACC,
         what="pure epsilon of a gated step scaled by its probability (unsound)"),
    dict(id="A05", file="dptm/accounting/rdp.py",
         old="    return np.clip(np.minimum(val, np.minimum(epsilon, a * epsilon ** 2 / 2.0)), 0.0, None)",
         new="    return np.clip(np.minimum(val, np.minimum(epsilon, a * epsilon ** 2 / 4.0)), 0.0, None)",
         tests=ACC, what="RDP of pure DP capped by alpha eps^2/4 (half the valid bound)"),
    dict(id="A06", file="dptm/accounting/accountants.py",
         old="            eps, _ = amplify_dp_by_subsampling(eps, 0.0, q)",
         new="            eps = eps * q", tests=ACC,
         what="amplification by subsampling of pure DP as eps * q (unsound)"),
    # -- the audit experiment ----------------------------------------------------------------
    dict(id="L01", file="dptm/attacks/lira.py", old="    tgt.fit(Xv[members])", new="    tgt.fit(Xv[~members])",
         tests=AUDIT, what="audit() trains the target on the non-members"),
    dict(id="L02", file="dptm/attacks/lira.py",
         old="        vocab = np.asarray(X[members].sum(axis=0)).ravel() > 0",
         new="        vocab = np.asarray(X.sum(axis=0)).ravel() > 0", tests=AUDIT,
         what="audit() restricts the vocabulary with all documents instead of the target's"),
]
