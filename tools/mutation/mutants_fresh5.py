"""The fifth blind round of mutants, written from the source alone (tests/ unread).

Written by a helper session that read only dptm/ (and the test files' NAMES, from
``ls tests/``, to choose each mutant's ``tests``); it read neither the tests nor the earlier
rounds' mutant definitions (only the top of ``mutants_fresh4.py``, for the format). Same
format as the earlier rounds: ``id``, ``file``, ``old`` (an exact substring occurring once),
``new``, ``tests`` (chosen from the test files' names only), ``what``. Ids J01-J67 (the
prefix J is new), Python files only (none needs a rebuild). Run with
``run.py --set fresh5 --prebuilt``. The first run (``--confirm``: a survivor of its listed
files is rerun on the whole suite) is recorded in
docs/records/2026-12-03-fresh-mutants-round5.md: 63 of 67 killed, 61 by the listed files.
J41 was killed only by a test in a file not listed (``MISSES``: appended to its list below);
J05 only by the frozen-draws hashes, and J28, J52, J60 and J67 survived: real gaps, each now
killed by a test written for it in its subject's files (``GAPS``). J06 is killed by the
harness's timeout: the mutant makes ``calibrate_laplace``'s round-off guard loop for ever.
"""

#: First-run survivors of their listed files killed by an existing test elsewhere.
MISSES = {
    "J41": "tests/test_output_privacy.py::"
           "test_topicdp_two_default_fits_differ_everywhere_and_keep_no_secret",
}

#: First-run gaps (survivors, or killed only by a frozen-draws hash), each killed since by a
#: test written for it.
GAPS = {
    "J05": "tests/test_accounting_accountants.py::"
           "test_calibrate_gaussian_steps_compose_like_one_release_of_sensitivity_root_steps",
    "J28": "tests/test_local.py::test_randomize_matrix_uses_presence_only_and_is_reproducible",
    "J52": "tests/test_cli.py::test_topicdp_base_model_carries_no_public_seed",
    "J60": "tests/test_release.py::test_release_owns_its_topics",
    "J67": "tests/test_robustness.py::test_corpus_refuses_word_ids_outside_the_vocabulary",
}

ACC = ["tests/test_accounting_primitives.py", "tests/test_accounting_golden.py",
       "tests/test_accounting_soundness.py", "tests/test_accounting_crosscheck.py"]
ACCOUNTANTS = ["tests/test_accounting_accountants.py", "tests/test_accounting_parallel.py",
               "tests/test_accounting_soundness.py", "tests/test_accounting_golden.py"]
VB = ["tests/test_private_vb.py", "tests/test_private_vb_privacy.py",
      "tests/test_private_vb_sensitivity.py", "tests/test_private_vb_statistic.py",
      "tests/test_private_vb_boundary.py"]
VB_USER = ["tests/test_private_vb_user_level.py", "tests/test_fdptm_user_level.py",
           "tests/test_bench_user_level.py", "tests/test_distributed.py"]
NOISE = ["tests/test_mechanisms.py", "tests/test_exact_sampling.py",
         "tests/test_noise_package.py", "tests/test_frozen_draws.py"]
RELEASES = ["tests/test_releases.py", "tests/test_noise_package.py",
            "tests/test_private_gibbs_ledger.py", "tests/test_svi_ledger.py"]
SECRETS = ["tests/test_secret_randomness.py", "tests/test_secrets_by_value.py",
           "tests/test_failed_fit_forgets_secrets.py", "tests/test_stream_independence.py"]
GIBBS = ["tests/test_private_gibbs.py", "tests/test_private_gibbs_ledger.py",
         "tests/test_private_gibbs_release.py", "tests/test_private_gibbs_order.py"]
SVI = ["tests/test_svi.py", "tests/test_svi_ledger.py", "tests/test_svi_release.py",
       "tests/test_svi_adversarial_neighbours.py"]
CLI = ["tests/test_cli.py", "tests/test_cli_advice.py", "tests/test_cli_raw_text.py",
       "tests/test_cli_user_level.py"]
LOCAL = ["tests/test_local.py", "tests/test_local_models.py", "tests/test_noise_package.py"]
TOPICDP = ["tests/test_topicdp.py", "tests/test_accounting_recipes.py", "tests/test_workflow.py"]
FDPTM = ["tests/test_fdptm.py", "tests/test_fdptm_user_level.py", "tests/test_workflow.py"]

FRESH5_MUTANTS = [
    # ------------------------------------------------------------------ accounting
    {"id": "J01", "file": "dptm/accounting/zcdp.py",
     "old": "return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))",
     "new": "return rho + math.sqrt(rho * math.log(1.0 / delta))",
     "tests": ACC + ["tests/test_accounting_accountants.py"],
     "what": "Bun-Steinke conversion loses its factor 2: every zCDP epsilon (min of CKS and it) "
             "is understated"},
    {"id": "J02", "file": "dptm/accounting/conversions.py",
     "old": "tv_ok = delta ** 2 + np.expm1(-r) >= 0",
     "new": "tv_ok = delta + np.expm1(-r) >= 0",
     "tests": ACC + ["tests/test_accounting_robust.py"],
     "what": "the total-variation shortcut compares delta instead of delta^2: small-RDP "
             "releases are reported as epsilon = 0"},
    {"id": "J03", "file": "dptm/accounting/conversions.py",
     "old": "return math.log1p(q * math.expm1(epsilon)) if epsilon < 700",
     "new": "return q * epsilon if epsilon < 700",
     "tests": ACC + ["tests/test_accounting_accountants.py"],
     "what": "amplification by subsampling linearised to q epsilon, below the sound "
             "log(1 + q(e^eps - 1)): subsampled pure-DP releases under-accounted"},
    {"id": "J04", "file": "dptm/accounting/conversions.py",
     "old": "adv = math.sqrt(2.0 * k * math.log(1.0 / delta_slack)) * epsilon",
     "new": "adv = math.sqrt(k * math.log(1.0 / delta_slack)) * epsilon",
     "tests": ACC + ["tests/test_accounting_recipes.py"],
     "what": "advanced composition drops the 2 under the root: the composed epsilon is "
             "understated"},
    {"id": "J05", "file": "dptm/accounting/calibration.py",
     "old": "return SelfComposedEvent(ev, steps) if steps > 1 else ev",
     "new": "return SelfComposedEvent(ev, steps) if steps > 2 else ev",
     "tests": ["tests/test_accounting_accountants.py", "tests/test_accounting_primitives.py",
               "tests/test_accounting_golden.py", "tests/test_accounting_recipes.py"],
     "what": "calibrate_gaussian with steps=2 accounts one step: the noise meets the target "
             "for one release but two are made"},
    {"id": "J06", "file": "dptm/accounting/calibration.py",
     "old": "scale = steps * sensitivity / eps_t",
     "new": "scale = sensitivity / eps_t",
     "tests": ["tests/test_accounting_accountants.py", "tests/test_accounting_primitives.py",
               "tests/test_accounting_golden.py", "tests/test_accounting_recipes.py"],
     "what": "calibrate_laplace ignores steps: each of the releases gets the whole budget "
             "(total epsilon steps x target)"},
    {"id": "J07", "file": "dptm/accounting/_validation.py",
     "old": "if not 0.0 < value <= 1.0:",
     "new": "if not 0.0 <= value <= 1.0:",
     "tests": ["tests/test_accounting_robust.py", "tests/test_accounting_primitives.py",
               "tests/test_accounting_accountants.py", "tests/test_budget.py"],
     "what": "probability() accepts 0: a sampling rate of 0 passes validation (no error "
             "message) and a subsampled release is accounted as free"},
    {"id": "J08", "file": "dptm/accounting/budget.py",
     "old": "gamma=min(sum(gammas), 0.999999) if gammas else None,",
     "new": "gamma=max(gammas) if gammas else None,",
     "tests": ["tests/test_budget.py", "tests/test_workflow.py", "tests/test_selection.py"],
     "what": "the budget composes random-DP gammas by max instead of the union bound: the "
             "composed failure probability is understated"},
    {"id": "J09", "file": "dptm/accounting/budget.py",
     "old": "        report = _copy(_report_of(release))\n",
     "new": "        report = _report_of(release)\n",
     "tests": ["tests/test_budget.py", "tests/test_workflow.py", "tests/test_selection.py"],
     "what": "the ledger keeps the caller's report object: editing it (or refitting the model) "
             "afterwards changes what the budget says was spent"},
    {"id": "J10", "file": "dptm/accounting/budget.py",
     "old": "seeded=any(r.seeded for r in reports)",
     "new": "seeded=all(r.seeded for r in reports)",
     "tests": ["tests/test_budget.py", "tests/test_workflow.py", "tests/test_secret_randomness.py"],
     "what": "a composed budget report with one seeded release among unseeded ones loses its "
             "TEST MODE label"},
    {"id": "J11", "file": "dptm/accounting/rdp.py",
     "old": "    eps = sensitivity / scale\n    t1 =",
     "new": "    eps = 1.0 / scale\n    t1 =",
     "tests": ACC + ["tests/test_accounting_accountants.py"],
     "what": "RDP of the Laplace mechanism ignores its L1 sensitivity: releases of "
             "sensitivity > 1 under-accounted"},
    {"id": "J12", "file": "dptm/accounting/rdp.py",
     "old": "k = np.arange(2, a + 1, dtype=float)",
     "new": "k = np.arange(2, a, dtype=float)",
     "tests": ACC + ["tests/test_accounting_accountants.py"],
     "what": "the integer-order subsampled-Gaussian sum drops its last term k = alpha: RDP "
             "(hence epsilon) understated"},
    {"id": "J13", "file": "dptm/accounting/events.py",
     "old": "        return self.sigma / self.sensitivity\n",
     "new": "        return self.sigma\n",
     "tests": ["tests/test_accounting_accountants.py", "tests/test_accounting_primitives.py",
               "tests/test_svi_ledger.py", "tests/test_private_vb_recorded_sigmas.py"],
     "what": "GaussianEvent.noise_multiplier ignores the sensitivity: a subsampled Gaussian of "
             "sensitivity N > 1 is accounted as if its noise were N times larger"},
    {"id": "J14", "file": "dptm/accounting/accountants.py",
     "old": "return np.maximum.reduce([self._cost(e, q) for e in event.events])",
     "new": "return np.minimum.reduce([self._cost(e, q) for e in event.events])",
     "tests": ACCOUNTANTS,
     "what": "parallel composition takes the cheapest branch's RDP instead of the dearest: "
             "the composite's epsilon understated"},
    {"id": "J15", "file": "dptm/accounting/accountants.py",
     "old": "        if self.delta > delta * (1 + 1e-12):\n            return math.inf\n",
     "new": "",
     "tests": ACCOUNTANTS + ["tests/test_budget.py"],
     "what": "the basic-composition accountant ignores the delta already spent: asked at a "
             "smaller delta it reports a finite epsilon that does not hold"},
    {"id": "J16", "file": "dptm/accounting/report.py",
     "old": "        if self.seeded:\n",
     "new": "        if self.seeded and notes:\n",
     "tests": ["tests/test_secret_randomness.py", "tests/test_cli.py", "tests/test_release.py",
               "tests/test_output_privacy.py"],
     "what": "the TEST MODE banner is dropped from the short report (format(notes=False), "
             "what the CLI prints by default): a seeded release looks publishable"},
    # ------------------------------------------------------------------ noise
    {"id": "J17", "file": "dptm/noise/mechanisms.py",
     "old": "frac = Fraction(math.ceil(var * q), q)",
     "new": "frac = Fraction(math.floor(var * q), q)",
     "tests": NOISE + ["tests/test_gauss_table.py"],
     "what": "the discrete Gaussian variance is rounded DOWN to the rational grid: less noise "
             "than asked (and reported effective sigma below the requested one)"},
    {"id": "J18", "file": "dptm/noise/mechanisms.py",
     "old": "per_coord = g if rounded == \"statistic\" else g / 2",
     "new": "per_coord = g / 2 if rounded == \"statistic\" else g",
     "tests": NOISE + ["tests/test_topicdp.py", "tests/test_svi.py"],
     "what": "rounding slack of a rounded statistic halved (swapped with the per-contribution "
             "case): the recorded sensitivity understates the lattice release's"},
    {"id": "J19", "file": "dptm/noise/mechanisms.py",
     "old": "_cgs.fill_noise(out.reshape(-1), 1, scale, _check_rng(rng).bit_generator)",
     "new": "_cgs.fill_noise(out.reshape(-1), 2, scale, _check_rng(rng).bit_generator)",
     "tests": NOISE + ["tests/test_releases.py"],
     "what": "laplace_noise draws Gaussian noise of sd = scale: lighter tails and half the "
             "variance, so the stated pure-DP Laplace guarantee does not hold"},
    {"id": "J20", "file": "dptm/noise/secret.py",
     "old": "key = int.from_bytes(os.urandom(16), \"little\")",
     "new": "key = int.from_bytes(os.urandom(2), \"little\")",
     "tests": SECRETS,
     "what": "the secret generator is keyed with 16 bits of entropy: an attacker enumerates "
             "the 65536 keys and subtracts the noise"},
    {"id": "J21", "file": "dptm/noise/secret.py",
     "old": "                if reset:\n                    _unfit(args[0])",
     "new": "                if False:\n                    _unfit(args[0])",
     "tests": SECRETS + ["tests/test_private_gibbs_secrets.py"],
     "what": "a failed private fit leaves its partial fitted attributes (releases drawn so far, "
             "an earlier fit's topics) on the estimator"},
    {"id": "J22", "file": "dptm/noise/secret.py",
     "old": "todo += [e.__cause__, e.__context__, *getattr(e, \"exceptions\", ())]",
     "new": "todo += [e.__cause__, *getattr(e, \"exceptions\", ())]",
     "tests": SECRETS,
     "what": "the frames of an exception's implicit context are not cleared: a fit failing "
             "while handling another error keeps the secret generator in the traceback"},
    {"id": "J23", "file": "dptm/noise/secret.py",
     "old": "        if isinstance(random_state, np.random.SeedSequence):\n",
     "new": "        if False:\n",
     "tests": SECRETS + ["tests/test_frozen_draws.py"],
     "what": "a SeedSequence seed is used as given: child streams advance the caller's "
             "SeedSequence, so the same seed gives another model on the next fit"},
    {"id": "J24", "file": "dptm/noise/releases.py",
     "old": "parts.append(SelfComposedEvent(ev, j - i + 1) if j > i else ev)",
     "new": "parts.append(SelfComposedEvent(ev, j - i) if j > i else ev)",
     "tests": RELEASES + ["tests/test_private_vb_recorded_sigmas.py"],
     "what": "the ledger composes each run of equal releases one short: a fit's report counts "
             "one fewer snapshot / release than it drew"},
    {"id": "J25", "file": "dptm/noise/releases.py",
     "old": "if len(self.events) > count or any(ev != planned for ev in self.events):",
     "new": "if len(self.events) > count:",
     "tests": RELEASES + ["tests/test_svi_release.py"],
     "what": "check_within no longer compares the drawn events to the planned one: noise "
             "smaller than accounted passes the check"},
    {"id": "J26", "file": "dptm/noise/releases.py",
     "old": "self.event = GaussianEvent(sigma=sigma, sensitivity=_SQRT2,",
     "new": "self.event = GaussianEvent(sigma=sigma, sensitivity=1.0,",
     "tests": RELEASES + ["tests/test_private_gibbs.py", "tests/test_snapshot_factor.py"],
     "what": "the Gaussian snapshot is accounted at L2 sensitivity 1 instead of sqrt 2 (word "
             "replacement changes two counts): epsilon understated"},
    {"id": "J27", "file": "dptm/noise/local_randomizers.py",
     "old": "n_flips = int(rng.binomial(V, f / 2.0))",
     "new": "n_flips = int(rng.binomial(V, f))",
     "tests": LOCAL,
     "what": "randomize flips each bit with probability f instead of f/2: at f = 1 every bit is "
             "flipped, so the server inverts the output exactly"},
    {"id": "J28", "file": "dptm/noise/local_randomizers.py",
     "old": "    X.sum_duplicates()\n    X.eliminate_zeros()\n    X.sort_indices()\n",
     "new": "    X.sum_duplicates()\n    X.sort_indices()\n",
     "tests": LOCAL,
     "what": "randomize_matrix treats explicitly stored zeros as present words: the sparse "
             "structure (not the data) decides the reported bits"},
    {"id": "J29", "file": "dptm/noise/local_randomizers.py",
     "old": "return flip_from_epsilon(float(epsilon) / n_bits)",
     "new": "return flip_from_epsilon(float(epsilon))",
     "tests": LOCAL + ["tests/test_cli.py"],
     "what": "f_from_epsilon ignores n_bits: a document-level target is spent on every bit, "
             "n_bits times the stated epsilon"},
    # ------------------------------------------------------------------ models
    {"id": "J30", "file": "dptm/models/_truncate.py",
     "old": "keep = order[rank < max_length]",
     "new": "keep = order[rank <= max_length]",
     "tests": SVI + ["tests/test_robustness.py"],
     "what": "a truncated document keeps max_length + 1 tokens: its contribution exceeds the "
             "length bound the sensitivity assumes"},
    {"id": "J31", "file": "dptm/models/vb_statistic.py",
     "old": "return math.floor(Fraction(bound) ** 2)",
     "new": "return math.ceil(Fraction(bound) ** 2)",
     "tests": VB,
     "what": "the exact lattice norm check allows a sum of squares one above floor(C^2/g^2): "
             "a unit's contribution can exceed the clip bound C"},
    {"id": "J32", "file": "dptm/models/user_contributions.py",
     "old": "key = owner[rows] * V + Xc.indices",
     "new": "key = rows * V + Xc.indices",
     "tests": VB_USER + ["tests/test_public_inputs_neighbours.py"],
     "what": "the user-level statistic groups by document instead of user: a user with many "
             "documents contributes up to (documents x C), not C"},
    {"id": "J33", "file": "dptm/models/user_contributions.py",
     "old": "return _norm_histogram(user_count_matrix(X, user_ptr))",
     "new": "return _norm_histogram(X)",
     "tests": VB_USER,
     "what": "the user-level norm histogram counts documents: one user moves many bins "
             "(sensitivity > 1) and n_users_estimate_ is a document count"},
    {"id": "J34", "file": "dptm/models/vb_denoise.py",
     "old": "sd = sd_f * math.sqrt(sum(wi * wi * (s / sd_f) ** 2",
     "new": "sd = sd_f * math.sqrt(sum(wi * (s / sd_f) ** 2",
     "tests": ["tests/test_private_vb_denoise.py", "tests/test_private_vb.py"],
     "what": "the combined release's noise sd uses the weights instead of their squares: the "
             "post-processing thresholds at a wrong sd (worse topics)"},
    {"id": "J35", "file": "dptm/models/private_vb.py",
     "old": "C, n_docs = clip_bound(noisy, release.sigma_, [m.z for m in model], K, V)",
     "new": "C, n_docs = clip_bound(hist, release.sigma_, [m.z for m in model], K, V)",
     "tests": VB + ["tests/test_private_vb_public_decisions.py"],
     "what": "the clip bound and n_documents_estimate_ are read from the TRUE norm histogram: "
             "the document count is released exactly"},
    {"id": "J36", "file": "dptm/models/private_vb.py",
     "old": "stat = statistic(beta, alpha, C, g, r.statistic == \"presence\")",
     "new": "stat = statistic(beta, alpha, C, None, r.statistic == \"presence\")",
     "tests": VB + ["tests/test_private_vb_recorded_sigmas.py"],
     "what": "contributions are no longer rounded down to the lattice: the release rounds the "
             "sum, whose slack is not in the recorded sensitivity C"},
    {"id": "J37", "file": "dptm/models/private_gibbs.py",
     "old": "return ComposedEvent((noise_event, SelfComposedEvent(sampling, T)))",
     "new": "return ComposedEvent((noise_event, sampling))",
     "tests": GIBBS,
     "what": "schedule 'first' accounts one sampling step instead of T: the later sweeps' "
             "topic assignments are released unaccounted"},
    {"id": "J38", "file": "dptm/models/private_gibbs.py",
     "old": "return hi if ok(hi) else log_bisect(ok, good=lo, bad=hi)",
     "new": "return hi if ok(hi) else log_bisect(ok, good=hi, bad=lo)",
     "tests": GIBBS + ["tests/test_private_gibbs_recount.py"],
     "what": "the noise bisection returns the end that misses the target: target_epsilon "
             "calibration overshoots"},
    {"id": "J39", "file": "dptm/models/subsampled_gibbs.py",
     "old": "return self.below >= self.window",
     "new": "return self.below > self.window",
     "tests": ["tests/test_private_gibbs.py", "tests/test_gibbs.py",
               "tests/test_private_gibbs_ledger.py"],
     "what": "SUB-LDA's stopping rule waits one extra iteration: n_iter_ and the released "
             "topics differ from eq. (9)'s"},
    {"id": "J40", "file": "dptm/models/topicdp.py",
     "old": "f[\"sensitivity_\"] = max(float(f[\"sensitivity_samples_\"][k - 1]), 1e-9)",
     "new": "f[\"sensitivity_\"] = max(float(f[\"sensitivity_samples_\"][k - 2]), 1e-9)",
     "tests": TOPICDP,
     "what": "the sampled sensitivity takes the (k-1)-th order statistic instead of the k-th: "
             "the noise is calibrated below the random-DP bound"},
    {"id": "J41", "file": "dptm/models/topicdp.py",
     "old": "            est.set_params(random_state=base.get_params(deep=False)[\"random_state\"])\n",
     "new": "            pass\n",
     "tests": TOPICDP + ["tests/test_secret_randomness.py", "tests/test_output_privacy.py"],
     "what": "the fitted estimator_ keeps the seed derived from the secret stream (its "
             "random_state), which then travels with the model"},
    {"id": "J42", "file": "dptm/models/topicdp_calibration.py",
     "old": "return math.sqrt(alpha * sensitivity ** 2 / (2.0 * eps_r)), eps_r",
     "new": "return math.sqrt(alpha * sensitivity / (2.0 * eps_r)), eps_r",
     "tests": TOPICDP,
     "what": "the Renyi calibration uses Delta instead of Delta^2: sigma too small for any "
             "sensitivity above 1"},
    {"id": "J43", "file": "dptm/models/topicdp_calibration.py",
     "old": "sigma = g * math.ceil(sigma / g)",
     "new": "sigma = g * math.floor(sigma / g)",
     "tests": TOPICDP,
     "what": "the lattice sigma is rounded down to whole steps: less noise than the "
             "calibration asked for"},
    {"id": "J44", "file": "dptm/models/local.py",
     "old": "\"word_replacement\": min(2, n_words)}[neighbouring]",
     "new": "\"word_replacement\": 1}[neighbouring]",
     "tests": LOCAL + ["tests/test_workflow.py"],
     "what": "the local report counts one bit for a word replacement (two bits change): its "
             "epsilon is half the true one"},
    {"id": "J45", "file": "dptm/models/svi.py",
     "old": "base, n_coords = math.sqrt(2.0) * N, K * min(2 * N, V)",
     "new": "base, n_coords = float(N), K * min(2 * N, V)",
     "tests": SVI + ["tests/test_svi_empirical_dp.py"],
     "what": "substitution sampling records sensitivity N instead of sqrt(2) N: noise and "
             "report understate a replaced document's effect"},
    {"id": "J46", "file": "dptm/models/svi.py",
     "old": "self._sigma_draw_ = sigma_c * self.sensitivity_ / base_sensitivity",
     "new": "self._sigma_draw_ = sigma_c",
     "tests": SVI,
     "what": "the lattice sigma is not scaled up with the rounding slack added to the "
             "sensitivity: the noise multiplier falls below the calibrated one"},
    {"id": "J47", "file": "dptm/models/_private_base.py",
     "old": "            _charge_failed_fit(type(self).__name__, fit, exc)\n",
     "new": "",
     "tests": ["tests/test_budget.py", "tests/test_selection.py",
               "tests/test_failed_fit_forgets_secrets.py"],
     "what": "the releases a failed fit drew are not charged to the active budget: a fit "
             "raising after noisy draws spends for free"},
    # ------------------------------------------------------------------ top level
    {"id": "J48", "file": "dptm/guardrails.py",
     "old": "if report.default_delta >= 1.0 / n:",
     "new": "if report.default_delta > 1.0 / n:",
     "tests": ["tests/test_guardrails.py", "tests/test_refusals_name_no_private_count.py",
               "tests/test_cli.py"],
     "what": "delta exactly 1/n is no longer flagged as vacuous (a mechanism publishing one "
             "record in the clear meets it)"},
    {"id": "J49", "file": "dptm/guardrails.py",
     "old": "n_docs = n if unit is not None and unit.startswith(\"documents\") else None",
     "new": "n_docs = n if unit is not None and unit.startswith(\"documents\") else n_docs",
     "tests": ["tests/test_guardrails.py", "tests/test_refusals_name_no_private_count.py",
               "tests/test_private_vb_user_level.py"],
     "what": "a private model without a public count compares K to len(X): the topic-count "
             "warning then tells a private D < K from its neighbour's"},
    {"id": "J50", "file": "dptm/_cli_report.py",
     "old": "how = (\"given as public\" if getattr(inner, \"clip_norm\", None) is not None else",
     "new": "how = (\"given as public\" if getattr(inner, \"clip_norm\", None) is None else",
     "tests": CLI,
     "what": "the clip line says a DP-chosen clip bound was given as public, and vice versa"},
    {"id": "J51", "file": "dptm/_cli_data.py",
     "old": "return eps_v, a.delta / 2.0, a.epsilon - eps_v, a.delta / 2.0",
     "new": "return eps_v, a.delta / 2.0, a.epsilon - eps_v, a.delta",
     "tests": CLI + ["tests/test_fdptm.py"],
     "what": "raw-text runs give the model the whole --delta besides the vocabulary's half: "
             "the composed delta is 1.5 x --delta"},
    {"id": "J52", "file": "dptm/cli.py",
     "old": "inner = _gibbs(a, seed=None)",
     "new": "inner = _gibbs(a)",
     "tests": CLI + ["tests/test_topicdp.py", "tests/test_cli_strict.py"],
     "what": "TopicDP's inner Gibbs model gets the fixed, public non-private seed: the private "
             "fit's base model is reproducible by anyone"},
    {"id": "J53", "file": "dptm/cli.py",
     "old": "else flip_for_target_epsilon(a.epsilon, X_train.shape[1]))",
     "new": "else flip_from_epsilon(a.epsilon))",
     "tests": CLI + ["tests/test_local_models.py"],
     "what": "the local models' --epsilon (a per-document total) is used per word: the "
             "document-level epsilon is V times the one asked"},
    {"id": "J54", "file": "dptm/selection.py",
     "old": "candidate_rdp = np.max([a.rdp for a in acc], axis=0)",
     "new": "candidate_rdp = np.min([a.rdp for a in acc], axis=0)",
     "tests": ["tests/test_selection.py", "tests/test_budget.py", "tests/test_workflow.py"],
     "what": "private selection is accounted at the cheapest candidate's RDP: with candidates "
             "of different epsilons the selection's epsilon is understated"},
    {"id": "J55", "file": "dptm/selection.py",
     "old": "return r + extra + math.log(mean_repetitions(eta, gamma)) / (a - 1)",
     "new": "return r + extra",
     "tests": ["tests/test_selection.py", "tests/test_budget.py"],
     "what": "the log E[K] / (lambda - 1) term of Papernot-Steinke is dropped: the cost of "
             "repeating the fits is under-accounted"},
    {"id": "J56", "file": "dptm/vocab.py",
     "old": "return gaps * (min(budget, z) / z)",
     "new": "return gaps * (budget / z)",
     "tests": ["tests/test_dp_vocabulary.py", "tests/test_fdptm.py"],
     "what": "the policy-Gaussian step is always of norm 1 (overshooting the gaps): words "
             "pass the cut-off past Gamma and a user's update is not a descent"},
    {"id": "J57", "file": "dptm/vocab.py",
     "old": "delta_thr = delta if noise == \"laplace\" else delta / 2.0",
     "new": "delta_thr = delta",
     "tests": ["tests/test_dp_vocabulary.py", "tests/test_fdptm.py",
               "tests/test_fdptm_user_level.py"],
     "what": "the Gaussian frequency threshold spends the whole delta besides the noise's "
             "delta/2: the vocabulary is (eps, 1.5 delta)-DP"},
    {"id": "J58", "file": "dptm/vocab.py",
     "old": "            uidx = check_groups(users, n_docs)\n",
     "new": "            uidx = np.arange(n_docs)\n",
     "tests": ["tests/test_dp_vocabulary.py", "tests/test_fdptm_user_level.py",
               "tests/test_cli_user_level.py"],
     "what": "DPVocabulary ignores groups: each document is a user, so a user with k "
             "documents contributes k x max_contribution words"},
    {"id": "J59", "file": "dptm/release.py",
     "old": "_NOT_PUBLIC = {\"random_state\", \"verbose\", \"callback\", \"n_jobs\"}",
     "new": "_NOT_PUBLIC = {\"verbose\", \"callback\", \"n_jobs\"}",
     "tests": ["tests/test_release.py", "tests/test_output_privacy.py",
               "tests/test_secret_randomness.py"],
     "what": "a release's hyperparameters keep random_state: a test-mode seed is published "
             "with the topics"},
    {"id": "J60", "file": "dptm/release.py",
     "old": "tw = np.array(topic_word, dtype=np.float64)",
     "new": "tw = np.asarray(topic_word, dtype=np.float64)",
     "tests": ["tests/test_release.py", "tests/test_release_load_hostile.py",
               "tests/test_output_privacy.py"],
     "what": "a normalised topic_word is kept by reference: changing the caller's array "
             "changes the release (and the model's topics) afterwards"},
    {"id": "J61", "file": "dptm/distributed.py",
     "old": "keys = [(k_order, k_init, k_sweep)] + [(_key(gen), _key(gen), _key(gen)) for _ in range(P - 1)]",
     "new": "keys = [(k_order, k_init, k_sweep)] * P",
     "tests": ["tests/test_distributed.py", "tests/test_parallel_gibbs.py",
               "tests/test_stream_independence.py"],
     "what": "every partition reuses partition 0's order / init / sweep keys: the secret "
             "streams of the workers are identical"},
    {"id": "J62", "file": "dptm/distributed.py",
     "old": "if seen.setdefault(u, i) != i:",
     "new": "if seen.setdefault(u, i) > i:",
     "tests": ["tests/test_distributed.py", "tests/test_private_vb_user_level.py"],
     "what": "a user split across partitions is no longer refused: each part is clipped on "
             "its own, so the user contributes up to P x C"},
    {"id": "J63", "file": "dptm/pipeline.py",
     "old": "total_delta = v_event.delta + delta2",
     "new": "total_delta = max(v_event.delta, delta2)",
     "tests": FDPTM,
     "what": "FDPTM's default delta is the larger stage delta, not their sum: the report "
             "prints epsilon at a delta the composition does not reach"},
    {"id": "J64", "file": "dptm/pipeline.py",
     "old": "est.set_params(random_state=int(gen.integers(2**31 - 1)) if seeded else None)",
     "new": "est.set_params(random_state=int(gen.integers(2**31 - 1)))",
     "tests": FDPTM + ["tests/test_secret_randomness.py"],
     "what": "an unseeded pipeline seeds its stages from the secret stream: the stages run in "
             "test mode and keep a derived seed"},
    {"id": "J65", "file": "dptm/attacks/evaluation.py",
     "old": "tpr_lo, _ = clopper_pearson(tp, n_pos, confidence)",
     "new": "_, tpr_lo = clopper_pearson(tp, n_pos, confidence)",
     "tests": ["tests/test_attack_eval.py", "tests/test_audit_experiment.py",
               "tests/test_empirical_privacy.py"],
     "what": "the empirical epsilon uses the TPR's upper confidence bound: the audit's "
             "'lower bound' overstates and can claim a violation of a sound mechanism"},
    {"id": "J66", "file": "dptm/attacks/evaluation.py",
     "old": "r = min(int(np.floor(fpr * n_neg + 1e-9)) + 1, n_neg)",
     "new": "r = min(int(np.floor(fpr * n_neg + 1e-9)), n_neg)",
     "tests": ["tests/test_attack_eval.py", "tests/test_lira.py", "tests/test_audit_experiment.py"],
     "what": "the null p-value's threshold is one non-member too high (off by one): p-values "
             "of TPR at FPR are wrong"},
    {"id": "J67", "file": "dptm/corpus.py",
     "old": "self.word_ids.max() >= self.n_words):",
     "new": "self.word_ids.max() > self.n_words):",
     "tests": ["tests/test_gibbs.py", "tests/test_robustness.py", "tests/test_fuzz.py"],
     "what": "a word id equal to V is accepted: the kernels index one past the topic-word "
             "counts"},
]
