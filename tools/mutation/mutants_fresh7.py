"""The seventh blind round of mutants, written from the source alone (tests/ unread).

Written by a helper session that read only dptm/ (its Python modules; and the test files'
NAMES, from ``ls tests/``, to choose each mutant's ``tests``); it read neither the tests nor
the earlier rounds' mutant definitions (only the top of ``mutants_fresh6.py``, for the
format). Same format as the earlier rounds: ``id``, ``file``, ``old`` (an exact substring
occurring once), ``new``, ``tests`` (chosen from the test files' names only), ``what``. Ids
T01-T55 (the prefix T is new), Python files only (none needs a rebuild), spread over 32
modules. Run with ``run.py --set fresh7 --prebuilt``. Not run when written: every mutant was
checked by a script to occur once and to compile, and by reading the code path to be
reachable from the public API and to change a result. The classes aimed at: off-by-one
counts and bounds, a lost or doubled factor, a wrong argument passed on or two swapped, a
missing or weakened step, the wrong variable released or reported, a leaked count or
seed, a stated parameter differing from the one used, a composition counted once instead
of T times.

First run (docs/records/2026-12-03-fresh-mutants-round7.md): 53 of 55 killed (96.4%), 52
by the listed files; T13 and T17 survived the whole suite: gaps, each now killed by a test
written for it (``GAPS``).
"""

#: First-run gaps (survivors, or killed only by a frozen-draws hash), each killed since by a
#: test written for it in its subject's file.
GAPS = {
    "T13": "tests/test_accounting_accountants.py::"
           "test_pure_report_summary_states_the_epsilon_at_delta_zero",
    "T17": "tests/test_private_vb.py::test_default_plan_draws_the_recorded_sigmas",
}

ACC = ["tests/test_accounting_primitives.py", "tests/test_accounting_golden.py",
       "tests/test_accounting_soundness.py", "tests/test_accounting_crosscheck.py"]
ACCOUNTANTS = ["tests/test_accounting_accountants.py", "tests/test_accounting_parallel.py",
               "tests/test_accounting_soundness.py", "tests/test_accounting_golden.py"]
REPORT = ["tests/test_release.py", "tests/test_releases.py", "tests/test_accounting_golden.py",
          "tests/test_cli.py"]
BUDGET = ["tests/test_budget.py", "tests/test_selection.py",
          "tests/test_failed_fit_forgets_secrets.py"]
VB = ["tests/test_private_vb.py", "tests/test_private_vb_privacy.py",
      "tests/test_private_vb_sensitivity.py", "tests/test_private_vb_statistic.py",
      "tests/test_private_vb_boundary.py"]
VB_USER = ["tests/test_private_vb_user_level.py", "tests/test_fdptm_user_level.py",
           "tests/test_cli_user_level.py", "tests/test_distributed.py"]
NOISE = ["tests/test_mechanisms.py", "tests/test_exact_sampling.py",
         "tests/test_noise_package.py", "tests/test_frozen_draws.py"]
GIBBS = ["tests/test_private_gibbs.py", "tests/test_private_gibbs_ledger.py",
         "tests/test_private_gibbs_release.py", "tests/test_accounting_recipes.py"]
SVI = ["tests/test_svi.py", "tests/test_svi_ledger.py", "tests/test_svi_adversarial_neighbours.py",
       "tests/test_svi_release.py"]
LOCAL = ["tests/test_local.py", "tests/test_local_models.py", "tests/test_empirical_dp.py"]
VOCAB = ["tests/test_dp_vocabulary.py", "tests/test_cli_raw_text.py", "tests/test_fdptm.py"]
TOPICDP = ["tests/test_topicdp.py", "tests/test_output_privacy.py", "tests/test_releases.py"]
SECRET = ["tests/test_secret_randomness.py", "tests/test_secrets_by_value.py",
          "tests/test_failed_fit_forgets_secrets.py", "tests/test_private_gibbs_secrets.py"]
CLI = ["tests/test_cli.py", "tests/test_cli_raw_text.py", "tests/test_cli_advice.py",
       "tests/test_cli_strict.py"]

FRESH7_MUTANTS = [
    # ---------------------------------------------------------------- accounting
    {"id": "T01", "file": "dptm/accounting/zcdp.py",
     "old": "return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))",
     "new": "return rho + math.sqrt(rho * math.log(1.0 / delta))",
     "tests": ACC + ["tests/test_accounting_recipes.py"],
     "what": "the Bun-Steinke zCDP-to-DP conversion loses the factor 2 of its square-root "
             "term: a smaller epsilon than rho-zCDP implies, stated by the zCDP accountant "
             "(conversion='bun-steinke') and by zcdp_to_dp"},
    {"id": "T02", "file": "dptm/accounting/rdp.py",
     "old": "t1 = np.log(a) - np.log(2 * a - 1) + (a - 1) * eps",
     "new": "t1 = np.log(a) - np.log(2 * a - 1) + (a - 2) * eps",
     "tests": ACC + ["tests/test_private_gibbs_ledger.py"],
     "what": "the Laplace RDP closed form with exponent (alpha - 2) eps instead of "
             "(alpha - 1) eps: an RDP curve below the true one, so every Laplace release "
             "(the Gibbs snapshots) is reported with too small an epsilon by the RDP route"},
    {"id": "T03", "file": "dptm/accounting/rdp.py",
     "old": "_log_expm1((k * k - k) / (2 * sigma * sigma))",
     "new": "_log_expm1((k * k - k) / (4 * sigma * sigma))",
     "tests": ACC + ["tests/test_svi_ledger.py"],
     "what": "the subsampled Gaussian's integer-order binomial sum with 4 sigma^2 instead of "
             "2 sigma^2 in the exponent: too small an RDP at integer orders, so a "
             "Poisson-sampled fit (PrivateOnlineLDA) states too small an epsilon"},
    {"id": "T04", "file": "dptm/accounting/events.py",
     "old": "return math.log1p(-f / 2.0) - math.log(f / 2.0)",
     "new": "return math.log1p(-f) - math.log(f)",
     "tests": LOCAL + ACC[:2],
     "what": "randomized response's epsilon computed as log((1 - f) / f), forgetting that a "
             "replaced bit is a fair coin (flip probability f/2): the local models report a "
             "wrong (for f >= 1/2 even negative) epsilon"},
    {"id": "T05", "file": "dptm/accounting/events.py",
     "old": "walk(e.event, c * e.count, q, label)",
     "new": "walk(e.event, c, q, label)",
     "tests": ["tests/test_release.py", "tests/test_releases.py",
               "tests/test_private_gibbs_ledger.py", "tests/test_accounting_accountants.py"],
     "what": "flattening an event tree ignores SelfComposedEvent counts: the report's "
             "mechanism list and to_dict() say each of T repeated releases ran once"},
    {"id": "T06", "file": "dptm/accounting/accountants.py",
     "old": "return max(self._cost(e) for e in event.events)",
     "new": "return min(self._cost(e) for e in event.events)",
     "tests": ACCOUNTANTS,
     "what": "the zCDP accountant takes the best part of a parallel composition instead of "
             "the worst: a record in the noisiest-to-least-noisy part is under-accounted"},
    {"id": "T07", "file": "dptm/accounting/accountants.py",
     "old": "return event.count * e, event.count * d",
     "new": "return event.count * e, d",
     "tests": ACCOUNTANTS + ["tests/test_budget.py"],
     "what": "basic composition of k repetitions of an (epsilon, delta) event adds epsilon "
             "k times but delta once: the pure route states a delta k times too small"},
    {"id": "T08", "file": "dptm/accounting/accountants.py",
     "old": "rdp = rdp_subsampled_gaussian(q, event.noise_multiplier, orders)",
     "new": "rdp = rdp_subsampled_gaussian(q, event.sigma, orders)",
     "tests": ACCOUNTANTS[:2] + ["tests/test_svi_ledger.py", "tests/test_svi.py"],
     "what": "a Poisson-sampled Gaussian is accounted with sigma instead of sigma / "
             "sensitivity: any sensitivity above 1 (PrivateOnlineLDA's N) gives a far too "
             "small epsilon"},
    {"id": "T09", "file": "dptm/accounting/calibration.py",
     "old": "return SelfComposedEvent(ev, steps) if steps > 1 else ev",
     "new": "return SelfComposedEvent(ev, steps) if steps > 2 else ev",
     "tests": ["tests/test_accounting_primitives.py", "tests/test_accounting_golden.py",
               "tests/test_accounting_soundness.py", "tests/test_svi.py"],
     "what": "calibrate_gaussian with steps=2 calibrates the noise of one step: the two "
             "releases together exceed the target epsilon"},
    {"id": "T10", "file": "dptm/accounting/calibration.py",
     "old": "return log_bisect(ok, good=hi, bad=lo, tol=tol)",
     "new": "return log_bisect(ok, good=lo, bad=hi, tol=tol)",
     "tests": ["tests/test_accounting_primitives.py", "tests/test_accounting_golden.py",
               "tests/test_accounting_soundness.py", "tests/test_svi.py"],
     "what": "the bisection's two ends swapped: the returned noise multiplier is the end "
             "that fails the target, so calibration overshoots the stated epsilon"},
    {"id": "T11", "file": "dptm/accounting/budget.py",
     "old": "total = self._composed(self._reports + [report]).epsilon(self.delta)",
     "new": "total = self._composed([report]).epsilon(self.delta)",
     "tests": BUDGET,
     "what": "BudgetAccountant.spend checks each new release alone against the cap, not its "
             "composition with what was already spent: the cap is exceeded by repeated "
             "releases, and spend returns the new release's epsilon as the total"},
    {"id": "T12", "file": "dptm/accounting/recipes.py",
     "old": "return 2.0 * math.log1p(clip / beta)",
     "new": "return math.log1p(clip / beta)",
     "tests": GIBBS,
     "what": "the inherent privacy of a Gibbs sweep from a clipped snapshot loses its factor "
             "2 (two counts change under word replacement): every NoisyGibbsLDA / "
             "SubsampledGibbsLDA report under-states the sampling steps' epsilon"},
    {"id": "T13", "file": "dptm/accounting/report.py",
     "old": "d[\"epsilon_pure\"] = self._safe_eps(0.0)[0]",
     "new": "d[\"epsilon_pure\"] = self._safe_eps(self.default_delta)[0]",
     # (its gap test's file added after the first run)
     "tests": REPORT + ["tests/test_local_models.py", "tests/test_accounting_accountants.py"],
     "what": "a pure-DP report's to_dict() (release.json's summary) states as its pure "
             "epsilon the epsilon at delta > 0, which is smaller"},
    {"id": "T14", "file": "dptm/accounting/report.py",
     "old": "f\"probability >= {1 - self.gamma:.6g} (1 - gamma",
     "new": "f\"probability >= {self.gamma:.6g} (1 - gamma",
     "tests": TOPICDP + ["tests/test_fdptm.py"],
     "what": "a random-DP report prints gamma as the probability the guarantee holds "
             "(0.1 instead of 0.9): the stated confidence differs from the one computed"},
    # ---------------------------------------------------------------- PrivateBatchLDA
    {"id": "T15", "file": "dptm/models/private_vb.py",
     "old": "release = LatticeGaussianRelease(sigma, C, g, ledger=fit.ledger)",
     "new": "release = LatticeGaussianRelease(sigma, 1.0, g, ledger=fit.ledger)",
     "tests": VB,
     "what": "the model releases are recorded with L2 sensitivity 1 instead of the clip "
             "bound C: the ledger (and privacy_) state a noise multiplier C times too large"},
    {"id": "T16", "file": "dptm/models/private_vb.py",
     "old": "C, n_docs = clip_bound(noisy, release.sigma_, [m.z for m in model], K, V)",
     "new": "C, n_docs = clip_bound(hist, release.sigma_, [m.z for m in model], K, V)",
     "tests": VB[:4] + ["tests/test_private_vb_public_decisions.py"],
     "what": "the clip bound and the document count estimate are computed from the TRUE "
             "norm histogram, not its noisy release: C and n_documents_estimate_ leak the "
             "data"},
    {"id": "T17", "file": "dptm/models/private_vb.py",
     "old": "float(drawn[0] * math.sqrt(",
     "new": "float(drawn[-1] * math.sqrt(",
     "tests": ["tests/test_private_vb.py", "tests/test_private_vb_recorded_sigmas.py",
               "tests/test_guardrails.py", "tests/test_private_vb_public_decisions.py"],
     "what": "count_estimate_sd_ is computed from the final release's sigma instead of the "
             "norm histogram's: the stated sd of the noisy count (and the delta guardrail "
             "built on it) is wrong"},
    {"id": "T18", "file": "dptm/models/vb_statistic.py",
     "old": "return math.floor(Fraction(bound) ** 2)",
     "new": "return math.ceil(Fraction(bound) ** 2)",
     "tests": ["tests/test_private_vb_statistic.py", "tests/test_private_vb_sensitivity.py",
               "tests/test_private_vb_boundary.py", "tests/test_svi_kernel.py"],
     "what": "the exact integer check of a unit's lattice contribution allows one more "
             "than floor(C^2 / g^2): a contribution of norm just above C passes, exceeding "
             "the recorded sensitivity"},
    {"id": "T19", "file": "dptm/models/user_contributions.py",
     "old": "return _norm_histogram(user_count_matrix(X, user_ptr))",
     "new": "return _norm_histogram(X)",
     "tests": VB_USER,
     "what": "the user-level norm histogram counts documents, not users: a user with k "
             "documents moves k bins (sensitivity k, recorded as 1) and the clip bound is "
             "set for documents"},
    {"id": "T20", "file": "dptm/models/user_contributions.py",
     "old": "Xs = sp.csr_matrix(X)[order]",
     "new": "Xs = sp.csr_matrix(X)",
     "tests": VB_USER,
     "what": "group_documents no longer orders the rows by user: user_ptr cuts the data "
             "order, so a 'user' clipped as a whole is a run of other users' documents and "
             "one real user can span several runs (sensitivity above C)"},
    # ---------------------------------------------------------------- noise / releases
    {"id": "T21", "file": "dptm/noise/releases.py",
     "old": "parts.append(SelfComposedEvent(ev, j - i + 1) if j > i else ev)",
     "new": "parts.append(SelfComposedEvent(ev, j - i) if j > i else ev)",
     "tests": ["tests/test_releases.py", "tests/test_private_gibbs_ledger.py",
               "tests/test_svi_ledger.py", "tests/test_private_vb_recorded_sigmas.py"],
     "what": "Ledger.composed counts a run of equal releases one short: the composed report "
             "of a fit omits one release of every repeated noise"},
    {"id": "T22", "file": "dptm/noise/releases.py",
     "old": "self.event = LaplaceEvent(scale=scale, sensitivity=2.0, discrete=self.discrete,",
     "new": "self.event = LaplaceEvent(scale=scale, sensitivity=1.0, discrete=self.discrete,",
     "tests": GIBBS[:3] + ["tests/test_releases.py"],
     "what": "the Laplace snapshot's event states L1 sensitivity 1 instead of 2 (word "
             "replacement changes two counts): NoisyGibbsLDA's snapshots are reported at "
             "half their epsilon"},
    {"id": "T23", "file": "dptm/noise/releases.py",
     "old": "self.event = GaussianEvent(sigma=sigma, sensitivity=_SQRT2, discrete=self.discrete,",
     "new": "self.event = GaussianEvent(sigma=sigma, sensitivity=1.0, discrete=self.discrete,",
     "tests": ["tests/test_private_gibbs.py", "tests/test_private_gibbs_ledger.py",
               "tests/test_releases.py", "tests/test_parallel_gibbs.py"],
     "what": "the Gaussian snapshot's event states L2 sensitivity 1 instead of sqrt 2: "
             "target_epsilon calibrates too little noise and reports understate epsilon"},
    {"id": "T24", "file": "dptm/noise/mechanisms.py",
     "old": "frac = Fraction(math.ceil(Fraction(scale) * _MAX_DEN), _MAX_DEN)",
     "new": "frac = Fraction(math.floor(Fraction(scale) * _MAX_DEN), _MAX_DEN)",
     "tests": NOISE + ["tests/test_laplace_table.py"],
     "what": "the discrete Laplace's rational scale is rounded down: the noise drawn is "
             "below the scale asked for (the effective scale returned is then below it)"},
    {"id": "T25", "file": "dptm/noise/mechanisms.py",
     "old": "per_coord = g if rounded == \"statistic\" else g / 2",
     "new": "per_coord = g / 2 if rounded == \"statistic\" else g",
     "tests": NOISE[:3] + ["tests/test_svi.py", "tests/test_topicdp.py"],
     "what": "lattice_rounding_slack swaps its two cases: a rounded statistic (SVI, TopicDP) "
             "gets half the slack it needs, so the recorded sensitivity is too small"},
    {"id": "T26", "file": "dptm/noise/local_randomizers.py",
     "old": "flips = np.sort(rng.choice(V, size=n_flips, replace=False)) if n_flips else ids[:0]",
     "new": "flips = np.sort(rng.choice(V - 1, size=n_flips, replace=False)) if n_flips else ids[:0]",
     "tests": LOCAL + ["tests/test_noise_package.py"],
     "what": "randomize never flips the last vocabulary word's bit: its presence is sent in "
             "the clear (infinite local epsilon for that word)"},
    {"id": "T27", "file": "dptm/noise/local_randomizers.py",
     "old": "flips = _bernoulli_positions(M * V, f / 2.0, rng)",
     "new": "flips = _bernoulli_positions((M - 1) * V, f / 2.0, rng)",
     "tests": LOCAL + ["tests/test_cli.py"],
     "what": "randomize_matrix draws no flip in the last document's row: that document's "
             "true presence bits are released"},
    {"id": "T28", "file": "dptm/noise/local_randomizers.py",
     "old": "return flip_from_epsilon(float(epsilon) / n_bits)",
     "new": "return flip_from_epsilon(float(epsilon))",
     "tests": LOCAL,
     "what": "f_from_epsilon ignores n_bits: a target over V bits gives the per-bit flip "
             "of the whole budget, so a document is only V x epsilon-LDP"},
    {"id": "T29", "file": "dptm/noise/secret.py",
     "old": "return gen, True",
     "new": "return gen, False",
     "tests": SECRET[:2] + ["tests/test_release.py", "tests/test_cli.py"],
     "what": "a seeded (test-mode) fit is reported as not seeded: its report drops the "
             "TEST MODE line although whoever knows the seed can subtract the noise"},
    {"id": "T30", "file": "dptm/noise/secret.py",
     "old": "todo += [e.__cause__, e.__context__, *getattr(e, \"exceptions\", ())]",
     "new": "todo += [e.__cause__, *getattr(e, \"exceptions\", ())]",
     "tests": SECRET[:3],
     "what": "a failed private fit clears the frames of the exception and its causes but "
             "not of its implicit context: the secret generator and the noise drawn stay "
             "reachable from an exception raised while handling another"},
    # ---------------------------------------------------------------- private Gibbs
    {"id": "T31", "file": "dptm/models/private_gibbs.py",
     "old": "return ComposedEvent((noise_event, SelfComposedEvent(sampling, T)))",
     "new": "return ComposedEvent((noise_event, sampling))",
     "tests": GIBBS[:3] + ["tests/test_private_gibbs_release.py"],
     "what": "schedule 'first' (CDP-LDA) accounts its T sampling steps as one: the report "
             "under-states epsilon by (T - 1) eps_I"},
    {"id": "T32", "file": "dptm/models/private_gibbs.py",
     "old": "return ComposedEvent((SelfComposedEvent(plain, T - 1), noise_event, sampling))",
     "new": "return ComposedEvent((SelfComposedEvent(plain, T - 2), noise_event, sampling))",
     "tests": GIBBS[:3],
     "what": "schedule 'last' accounts T - 2 plain sweeps on the true counts instead of "
             "T - 1: one sweep is released unaccounted"},
    {"id": "T33", "file": "dptm/models/private_gibbs.py",
     "old": "corpus = _visiting_order(corpus, order_rng)",
     "new": "corpus = _visiting_order(corpus, order_rng, order=\"sorted\")",
     "tests": ["tests/test_private_gibbs_order.py", "tests/test_private_gibbs.py",
               "tests/test_frozen_draws.py"],
     "what": "the test hook's word-id visiting order is used by fit: a replaced word moves "
             "its token within the sweep and the per-sweep bound eps_I no longer holds"},
    {"id": "T34", "file": "dptm/models/subsampled_gibbs.py",
     "old": "return SelfComposedEvent(ComposedEvent((noise.event, sampling)), T)",
     "new": "return ComposedEvent((noise.event, SelfComposedEvent(sampling, T)))",
     "tests": ["tests/test_private_gibbs.py", "tests/test_private_gibbs_ledger.py",
               "tests/test_accounting_recipes.py", "tests/test_topic_based_attack.py"],
     "what": "SubsampledGibbsLDA accounts one Gaussian snapshot for T iterations that each "
             "draw one: too little noise calibrated, the report under-states epsilon (the "
             "ledger check then refuses the fit)"},
    # ---------------------------------------------------------------- SVI / VIPS
    {"id": "T35", "file": "dptm/models/svi.py",
     "old": "base, n_coords = math.sqrt(2.0) * N, K * min(2 * N, V)",
     "new": "base, n_coords = float(N), K * min(2 * N, V)",
     "tests": SVI,
     "what": "shuffle/sequential batches (substitution) use sensitivity N instead of sqrt(2) "
             "N: the noise is sqrt 2 too small for the stated guarantee"},
    {"id": "T36", "file": "dptm/models/svi.py",
     "old": "scale = 1.0 / q",
     "new": "scale = D / max(rows.size, 1)",
     "tests": SVI[:2] + ["tests/test_svi_empirical_dp.py"],
     "what": "the Poisson minibatch is scaled by the realised batch size (and D) instead of "
             "the public 1 / q: the released topics reveal the number of sampled documents"},
    {"id": "T37", "file": "dptm/models/svi.py",
     "old": "self._sigma_draw_ = sigma_c * self.sensitivity_ / base_sensitivity",
     "new": "self._sigma_draw_ = sigma_c",
     "tests": SVI[:2] + ["tests/test_parallel_svi.py"],
     "what": "the lattice mechanism's sigma is not scaled with the rounding slack added to "
             "the sensitivity: the noise multiplier drawn is below the one asked for"},
    {"id": "T38", "file": "dptm/models/_truncate.py",
     "old": "keep = order[rank < max_length]",
     "new": "keep = order[rank <= max_length]",
     "tests": ["tests/test_svi.py", "tests/test_svi_adversarial_neighbours.py",
               "tests/test_robustness.py"],
     "what": "truncation keeps max_length + 1 tokens of a long document: its contribution "
             "exceeds the sensitivity N the noise is calibrated to"},
    {"id": "T39", "file": "dptm/models/_private_base.py",
     "old": "_charge_failed_fit(type(self).__name__, fit, exc)",
     "new": "pass",
     "tests": BUDGET,
     "what": "a private fit that raises after drawing releases is not charged to the "
             "active budget, although its noisy values may be in the exception"},
    # ---------------------------------------------------------------- selection, TopicDP, local
    {"id": "T40", "file": "dptm/selection.py",
     "old": "candidate_rdp = np.max([a.rdp for a in acc], axis=0)",
     "new": "candidate_rdp = np.min([a.rdp for a in acc], axis=0)",
     "tests": ["tests/test_selection.py", "tests/test_budget.py"],
     "what": "private selection composes the smallest candidate RDP at each order instead "
             "of the largest: its report under-states epsilon when candidates differ"},
    {"id": "T41", "file": "dptm/models/topicdp.py",
     "old": "f[\"sensitivity_\"] = max(float(f[\"sensitivity_samples_\"][k - 1]), 1e-9)",
     "new": "f[\"sensitivity_\"] = max(float(f[\"sensitivity_samples_\"][k - 2]), 1e-9)",
     "tests": TOPICDP,
     "what": "the sampled sensitivity is the (k - 1)-th smallest distance instead of the "
             "k-th: too small a sensitivity for the stated gamma"},
    {"id": "T42", "file": "dptm/models/topicdp_calibration.py",
     "old": "return 2.0 * n_rows / check_positive(epsilon, \"epsilon\")",
     "new": "return n_rows / check_positive(epsilon, \"epsilon\")",
     "tests": TOPICDP,
     "what": "the Laplace baseline's L1 sensitivity is m instead of 2m: half the noise the "
             "stated pure epsilon needs"},
    {"id": "T43", "file": "dptm/models/topicdp_calibration.py",
     "old": "return math.sqrt(alpha * sensitivity ** 2 / (2.0 * eps_r)), eps_r",
     "new": "return math.sqrt(alpha * sensitivity / (2.0 * eps_r)), eps_r",
     "tests": TOPICDP[:2] + ["tests/test_accounting_recipes.py"],
     "what": "TopicDP's Renyi calibration uses Delta instead of Delta^2: sigma scales with "
             "sqrt(Delta), too little noise for any sensitivity above 1"},
    {"id": "T44", "file": "dptm/models/local.py",
     "old": "n_bits = {\"document\": n_words, \"word\": 1, \"word_replacement\": min(2, n_words)}",
     "new": "n_bits = {\"document\": n_words - 1, \"word\": 1, \"word_replacement\": min(2, n_words)}",
     "tests": LOCAL + ["tests/test_cli_local_empty.py"],
     "what": "a local model's document-level report composes V - 1 presence bits instead "
             "of V: the stated total epsilon is one bit's epsilon short"},
    # ---------------------------------------------------------------- DP vocabulary, pipeline
    {"id": "T45", "file": "dptm/vocab.py",
     "old": "if w.size > cap:",
     "new": "if w.size > cap + 1:",
     "tests": VOCAB + ["tests/test_fdptm_user_level.py"],
     "what": "a user with max_contribution + 1 distinct words keeps them all: the threshold "
             "computed for Delta_0 words no longer bounds delta"},
    {"id": "T46", "file": "dptm/vocab.py",
     "old": "released = cand[noisy > rho]",
     "new": "released = cand[H[cand] > rho]",
     "tests": VOCAB,
     "what": "the vocabulary is selected by the true weights instead of the noisy ones: "
             "the released set is a deterministic function of the data"},
    {"id": "T47", "file": "dptm/vocab.py",
     "old": "scale = analytic_gaussian_sigma(eps, delta / 2.0)",
     "new": "scale = analytic_gaussian_sigma(eps, delta)",
     "tests": VOCAB,
     "what": "the Gaussian methods calibrate their noise at delta instead of delta/2 while "
             "the threshold also spends delta/2: the total delta is 1.5 x the stated one"},
    {"id": "T48", "file": "dptm/pipeline.py",
     "old": "vocabulary_stage = _seed(vocab, gen, seeded).fit(tokens, users)",
     "new": "vocabulary_stage = _seed(vocab, gen, seeded).fit(tokens)",
     "tests": ["tests/test_fdptm_user_level.py", "tests/test_fdptm.py",
               "tests/test_cli_user_level.py"],
     "what": "FullyPrivateTopicModel with groups selects its vocabulary per document while "
             "the composed report says user level: a user with k documents contributes k "
             "times the cap"},
    # ---------------------------------------------------------------- distributed
    {"id": "T49", "file": "dptm/distributed.py",
     "old": "keys = [(k_order, k_init, k_sweep)] + [(_key(gen), _key(gen), _key(gen)) for _ in range(P - 1)]",
     "new": "keys = [(k_order, k_init, k_sweep)] * P",
     "tests": ["tests/test_distributed.py", "tests/test_stream_independence.py",
               "tests/test_parallel_gibbs.py"],
     "what": "every partition of a distributed Gibbs fit reuses partition 0's order, init "
             "and sweep keys: the partitions' secret streams are identical, not independent"},
    {"id": "T50", "file": "dptm/distributed.py",
     "old": "for st in stats:",
     "new": "for st in stats[1:]:",
     "tests": ["tests/test_distributed.py", "tests/test_private_vb_user_level.py"],
     "what": "the driver drops the first partition's statistic: a distributed "
             "PrivateBatchLDA fit differs from the one-process fit on the same data"},
    # ---------------------------------------------------------------- guardrails, CLI, release
    {"id": "T51", "file": "dptm/guardrails.py",
     "old": "n_docs = n if unit is not None and unit.startswith(\"documents\") else None",
     "new": "n_docs = n if unit is not None and unit.startswith(\"documents\") else n_docs",
     "tests": ["tests/test_guardrails.py", "tests/test_refusals_name_no_private_count.py",
               "tests/test_cli.py"],
     "what": "a private model whose report declares no public document count gets the "
             "topic-count warning from len(X): a warning that tells D < K from D >= K"},
    {"id": "T52", "file": "dptm/_cli_report.py",
     "old": "if n_words < 10 * n_topics:",
     "new": "if n_words < n_topics:",
     "tests": CLI[:3] + ["tests/test_cli_user_level.py"],
     "what": "the CLI's publication verdict loses its factor 10: a release with 2 words per "
             "topic is called worth publishing"},
    {"id": "T53", "file": "dptm/_cli_data.py",
     "old": "return eps_v, a.delta / 2.0, a.epsilon - eps_v, a.delta / 2.0",
     "new": "return eps_v, a.delta / 2.0, a.epsilon, a.delta / 2.0",
     "tests": ["tests/test_cli_raw_text.py", "tests/test_cli.py", "tests/test_cli_user_level.py"],
     "what": "a raw-text CLI run gives the model the whole --epsilon besides the "
             "vocabulary's share: the composed total exceeds the --epsilon asked for"},
    {"id": "T54", "file": "dptm/cli.py",
     "old": "else flip_for_target_epsilon(a.epsilon, X_train.shape[1]))",
     "new": "else flip_for_target_epsilon(a.epsilon, X_train.shape[1], \"word\"))",
     "tests": ["tests/test_cli.py", "tests/test_cli_local_empty.py", "tests/test_local_models.py"],
     "what": "the CLI randomizes the clients' bits at --epsilon per word while the model "
             "states --epsilon per document: the data are V times less protected than "
             "reported"},
    {"id": "T55", "file": "dptm/release.py",
     "old": "_NOT_PUBLIC = {\"random_state\", \"verbose\", \"callback\", \"n_jobs\"}",
     "new": "_NOT_PUBLIC = {\"verbose\", \"callback\", \"n_jobs\"}",
     "tests": ["tests/test_release.py", "tests/test_release_load_hostile.py",
               "tests/test_secrets_by_value.py"],
     "what": "a release's hyperparameters keep random_state: a seeded fit publishes the "
             "seed that regenerates its noise in release.json"},
]
