"""The third blind round of mutants, written from the source alone (tests/ unread).

Same format as ``mutants_fresh2.py``: ``id``, ``file``, ``old`` (an exact substring occurring
once), ``new``, ``tests`` (chosen from the test files' names only), ``what``; optional
``equivalent`` for a survivor judged harmless. Run with ``run.py --set fresh3``
(``--prebuilt`` for all but the kernel ones, C63-C66, which need a rebuild). The first run
(62 of 66 killed) and what was done about its survivors are recorded in
docs/records/2026-12-02-fresh-mutants-round3.md: C21, C34, C51 and C56 were real gaps, now
killed by tests in their subjects' files (``GAPS`` below); the test lists are those of the
first run.
"""

#: The first run's survivors, each killed since by a test written for it.
GAPS = {
    "C21": "tests/test_accounting_discrete_pld.py::test_a_shift_smaller_than_the_sensitivity_is_refused",
    "C34": "tests/test_private_gibbs.py::"
           "test_sublda_adaptive_rates_come_from_each_iterations_noisy_snapshot",
    "C51": "tests/test_cli_raw_text.py::"
           "test_word_level_models_are_refused_on_raw_text_before_anything_is_printed",
    "C56": "tests/test_fdptm.py::test_each_stage_is_stated_at_its_own_delta",
}

VB = ["tests/test_private_vb.py", "tests/test_private_vb_privacy.py",
      "tests/test_private_vb_sensitivity.py", "tests/test_private_vb_recorded_sigmas.py"]
USER = ["tests/test_private_vb_user_level.py", "tests/test_fdptm_user_level.py",
        "tests/test_cli_user_level.py", "tests/test_private_vb_public_decisions.py",
        "tests/test_public_inputs_neighbours.py"]
RAND = ["tests/test_secret_randomness.py", "tests/test_secrets_by_value.py",
        "tests/test_failed_fit_forgets_secrets.py"]
MECH = ["tests/test_mechanisms.py", "tests/test_exact_sampling.py"]
ACC = ["tests/test_accounting_primitives.py", "tests/test_accounting_crosscheck.py",
       "tests/test_accounting_soundness.py", "tests/test_accounting_golden.py"]
ACC2 = ["tests/test_accounting_accountants.py", "tests/test_accounting_crosscheck.py",
        "tests/test_accounting_robust.py"]
DPLD = ["tests/test_accounting_discrete_pld.py"]
BUDGET = ["tests/test_budget.py", "tests/test_accounting_robust.py"]
RELEASE = ["tests/test_release.py", "tests/test_release_load_hostile.py"]
CLI = ["tests/test_cli.py", "tests/test_cli_adjacency.py", "tests/test_cli_raw_text.py",
       "tests/test_cli_strict.py"]
SEL = ["tests/test_selection.py"]
GUARD = ["tests/test_guardrails.py", "tests/test_refusals_name_no_private_count.py"]
VOCAB = ["tests/test_dp_vocabulary.py"]
FDPTM = ["tests/test_fdptm.py", "tests/test_dp_vocabulary.py"]
TOPICDP = ["tests/test_topicdp.py", "tests/test_output_privacy.py"]
SVI = ["tests/test_svi.py", "tests/test_svi_ledger.py", "tests/test_svi_release.py"]
GIBBS = ["tests/test_private_gibbs.py", "tests/test_private_gibbs_ledger.py",
         "tests/test_private_gibbs_release.py"]
LOCAL = ["tests/test_local.py", "tests/test_local_models.py"]
LTAB = ["tests/test_laplace_table.py"]
GTAB = ["tests/test_gauss_table.py"]
GINV = ["tests/test_gauss_inversion.py", "tests/test_gauss_inversion_independent.py"]
DIST = ["tests/test_distributed.py"]
FROZEN = ["tests/test_frozen_draws.py"]

FRESH3_MUTANTS = [
    # ------------------------------------------------------------------ noise
    dict(id="C01", file="dptm/noise/mechanisms.py",
         old="frac = Fraction(math.ceil(Fraction(scale) * _MAX_DEN), _MAX_DEN)",
         new="frac = Fraction(math.floor(Fraction(scale) * _MAX_DEN), _MAX_DEN)",
         tests=MECH + ["tests/test_noise_package.py", "tests/test_accounting_soundness.py"]
         + FROZEN,
         what="discrete Laplace scale rounded DOWN to the 2^-20 grid: less noise than asked "
              "(the effective scale still reports what was drawn)"),
    dict(id="C02", file="dptm/noise/mechanisms.py",
         old='per_coord = g if rounded == "statistic" else g / 2',
         new='per_coord = g / 2 if rounded == "statistic" else g',
         tests=MECH + ["tests/test_svi_release.py", "tests/test_svi_ledger.py",
                       "tests/test_topicdp.py"],
         what="lattice rounding slack of a rounded statistic halved (g/2 instead of g per "
              "coordinate): the sensitivity of the lattice releases understated"),
    dict(id="C03", file="dptm/noise/mechanisms.py",
         old="    while Fraction(x) ** 2 > frac:\n        x = math.nextafter(x, 0.0)\n"
             "    while Fraction(math.nextafter(x, math.inf)) ** 2 <= frac:",
         new="    while Fraction(math.nextafter(x, math.inf)) ** 2 <= frac:",
         tests=MECH + ["tests/test_private_vb_recorded_sigmas.py",
                       "tests/test_noise_package.py", "tests/test_accounting_discrete_pld.py"],
         what="the reported discrete-Gaussian sigma is sqrt rounded to nearest, not down: it "
              "can exceed the drawn sigma by one ulp (more noise reported than drawn)"),
    dict(id="C04", file="dptm/noise/laplace_table.py",
         old="            return m - 1                            # U >= T_m",
         new="            return m                                # U >= T_m",
         tests=LTAB + MECH,
         what="stage-3 resolver of the dyadic discrete Laplace counts one threshold too many "
              "(off by one in |x| on undecided draws)"),
    dict(id="C05", file="dptm/noise/laplace_table.py",
         old="return a, -1.0 / math.log(a / den) * (1 - 1e-12)",
         new="return a, -1.0 / math.log(a / den) * (1 + 1e-12)",
         tests=LTAB + MECH + ["tests/test_private_gibbs_ledger.py", "tests/test_private_gibbs.py"],
         what="the dyadic Laplace's effective scale told to the accountant exceeds the scale "
              "drawn (margin on the wrong side: epsilon understated)"),
    dict(id="C06", file="dptm/noise/gauss_table.py",
         old="squeeze = [float(exp_neg_bounds(((j + 1) * B - 1) ** 2 * q, 2 * p)[0] * c / weights[j])",
         new="squeeze = [float(exp_neg_bounds((j * B) ** 2 * q, 2 * p)[0] * c / weights[j])",
         tests=GTAB + MECH,
         what="the alias-table sampler's fast-accept squeeze taken at a bin's FIRST m (its "
              "largest acceptance): later m of a wide bin accepted too often, wrong pmf "
              "above sigma 16"),
    dict(id="C07", file="dptm/noise/gauss_inversion.py",
         old="Zlo, Zhi = (1 << P) + 2 * Flo[1], (1 << P) + 2 * Fhi[1]",
         new="Zlo, Zhi = (1 << P) + Flo[1], (1 << P) + Fhi[1]",
         tests=GINV + MECH,
         what="inversion table's normaliser counts one side of the discrete Gaussian only "
              "(Z = 1 + sum instead of 1 + 2 sum): the tails carry twice their mass"),
    dict(id="C08", file="dptm/noise/secret.py",
         old='if k not in keep and not k.startswith("_sklearn")]',
         new='if k not in keep and not k.startswith("_")]',
         tests=RAND + ["tests/test_private_gibbs_secrets.py", "tests/test_private_vb_privacy.py"],
         what="a failed private fit keeps every private attribute (_seeded, _corpus_shape, "
              "partial state): the reset only drops public fitted attributes"),
    dict(id="C09", file="dptm/noise/secret.py",
         old='todo += [e.__cause__, e.__context__, *getattr(e, "exceptions", ())]',
         new='todo += [e.__cause__, *getattr(e, "exceptions", ())]',
         tests=RAND + ["tests/test_private_gibbs_secrets.py", "tests/test_noise_package.py"],
         what="implicit exception context (__context__) not walked: the frames of an error "
              "raised while handling another keep the generator and releases"),
    # ------------------------------------------------------------------ accounting
    dict(id="C10", file="dptm/accounting/events.py",
         old="return math.log1p(-f / 2.0) - math.log(f / 2.0)",
         new="return math.log1p(-f) - math.log(f)",
         tests=LOCAL + ["tests/test_accounting_primitives.py", "tests/test_accounting_golden.py",
                        "tests/test_accounting_recipes.py"],
         what="randomized response epsilon with flip probability f instead of f/2 (a bit is "
              "replaced by a fair coin, so flipped with f/2): epsilon understated"),
    dict(id="C11", file="dptm/accounting/rdp.py",
         old="    return np.clip(val, 0.0, rdp)\n",
         new="    return np.clip(val, 0.0, p * rdp)\n",
         tests=ACC + ["tests/test_accounting_robust.py", "tests/test_private_gibbs_ledger.py"],
         what="gated RDP capped at p x rdp (the Jensen LOWER bound): the subsampled sampling "
              "step under-accounted"),
    dict(id="C12", file="dptm/accounting/rdp.py",
         old="k = np.arange(2, a + 1, dtype=float)",
         new="k = np.arange(3, a + 1, dtype=float)",
         tests=ACC + ["tests/test_accounting_robust.py", "tests/test_accounting_accountants.py"],
         what="integer-order subsampled Gaussian RDP drops its k = 2 term (the dominant one): "
              "amplification overstated"),
    dict(id="C13", file="dptm/accounting/zcdp.py",
         old="return a * rho + (log_inv + am1 * math.log1p(-1.0 / a) - math.log(a)) / am1",
         new="return a * rho + (log_inv + am1 * math.log1p(-1.0 / a) - math.log(a)) / a",
         tests=ACC + ["tests/test_accounting_accountants.py"],
         what="CKS zCDP -> DP conversion divides by alpha instead of alpha - 1: epsilon "
              "understated"),
    dict(id="C14", file="dptm/accounting/conversions.py",
         old="tv_ok = delta ** 2 + np.expm1(-r) >= 0",
         new="tv_ok = delta + np.expm1(-r) >= 0",
         tests=ACC + ["tests/test_accounting_robust.py", "tests/test_accounting_accountants.py"],
         what="the total-variation shortcut uses delta >= 1 - e^-r instead of delta^2: an "
              "RDP below ~delta reports epsilon 0"),
    dict(id="C15", file="dptm/accounting/conversions.py",
         old="return math.log1p(q * math.expm1(epsilon)) if epsilon < 700",
         new="return q * epsilon if epsilon < 700",
         tests=ACC + ACC2 + ["tests/test_accounting_recipes.py"],
         what="amplification by subsampling linearised to q eps (below log(1 + q(e^eps - 1)))"),
    dict(id="C16", file="dptm/accounting/conversions.py",
         old="t1 = epsilon - (log_zeta - math.log(delta)) / (alpha - 1)",
         new="t1 = epsilon + (log_zeta - math.log(delta)) / (alpha - 1)",
         tests=ACC + TOPICDP + ["tests/test_accounting_recipes.py"],
         what="dp_to_rdp's first term with the wrong sign: a larger RDP budget, TopicDP's "
              "noise too small"),
    dict(id="C17", file="dptm/accounting/accountants.py",
         old="rdp = np.where(orders == np.floor(orders), rdp, np.inf)",
         new="rdp = np.where(orders == np.floor(orders), rdp, rdp)",
         tests=ACC + ACC2 + DPLD + ["tests/test_svi_ledger.py"],
         what="subsampled DISCRETE Gaussian accounted at fractional orders too (the series "
              "rests on the continuous density)"),
    dict(id="C18", file="dptm/accounting/accountants.py",
         old="isinstance(event, (SelfComposedEvent, ComposedEvent, ParallelComposedEvent)):\n"
             "            # Several mechanisms",
         new="isinstance(event, (ComposedEvent, ParallelComposedEvent)):\n"
             "            # Several mechanisms",
         tests=ACC2 + ACC + ["tests/test_accounting_parallel.py"],
         what="RDP: a SelfComposedEvent inside a Poisson subsample amplified repetition by "
              "repetition although all of them run on ONE shared subsample"),
    dict(id="C19", file="dptm/accounting/calibration.py",
         old="return SelfComposedEvent(ev, steps) if steps > 1 else ev",
         new="return SelfComposedEvent(ev, steps) if steps > 2 else ev",
         tests=ACC + ["tests/test_accounting_accountants.py", "tests/test_svi.py",
                      "tests/test_svi_ledger.py"],
         what="calibrate_gaussian: two steps calibrated as one (off by one in the composition)"),
    dict(id="C20", file="dptm/accounting/calibration.py",
         old="return log_bisect(ok, good=hi, bad=lo, tol=tol)",
         new="return log_bisect(ok, good=lo, bad=hi, tol=tol)",
         tests=ACC + ["tests/test_svi.py", "tests/test_private_vb.py", "tests/test_topicdp.py"],
         what="calibration bisects with good and bad swapped: returns the noise that MISSES "
              "the target"),
    dict(id="C21", file="dptm/accounting/discrete_pld.py",
         old="if not math.isclose(norm, event.sensitivity, rel_tol=1e-12):",
         new="if norm > event.sensitivity * (1 + 1e-12):",
         tests=DPLD + ACC2,
         what="discrete PLD accepts declared integer shifts of SMALLER norm than the event's "
              "sensitivity (a caller under-declares the shift: epsilon too small)"),
    dict(id="C22", file="dptm/accounting/budget.py",
         old="total = self._composed(self._reports + [report]).epsilon(self.delta)",
         new="total = self._composed([report]).epsilon(self.delta)",
         tests=BUDGET + SEL,
         what="budget spend checks the new release alone against the cap, not the composition "
              "with what was spent"),
    dict(id="C23", file="dptm/accounting/budget.py",
         old="gamma=min(sum(gammas), 0.999999) if gammas else None,",
         new="gamma=max(gammas) if gammas else None,",
         tests=BUDGET + ["tests/test_topicdp.py", "tests/test_selection.py"],
         what="random-DP gammas of composed releases: the max instead of the union bound"),
    dict(id="C24", file="dptm/accounting/report.py",
         old="                    pld_eps = math.inf\n",
         new="                    pld_eps = 0.0\n",
         tests=ACC2 + BUDGET + ["tests/test_accounting_soundness.py",
                                "tests/test_accounting_primitives.py"],
         what="a degenerate event on which dp_accounting's PLD raises reports epsilon 0 (the "
              "fallback should be the built-in bound)"),
    # ------------------------------------------------------------------ private VB / user level
    dict(id="C25", file="dptm/_utils.py",
         old="    if not X.has_canonical_format:\n        X = X.copy()",
         new="    if False:\n        X = X.copy()",
         tests=VB + ["tests/test_private_vb_boundary.py", "tests/test_robustness.py",
                     "tests/test_distributed.py"],
         what="_expected_counts no longer sums duplicate CSR entries: a word stored twice in a "
              "row is clipped in two parts (sqrt 2 x the sensitivity)"),
    dict(id="C26", file="dptm/models/private_vb.py",
         old="user_expected_counts(Xs, user_ptr, beta, alpha, C, granularity=g,",
         new="_expected_counts(Xs, beta, alpha, C, granularity=g,",
         tests=USER + ["tests/test_private_vb.py", "tests/test_distributed.py"],
         what="fit(X, groups=) clips per DOCUMENT while the report says user level (a user "
              "with n documents moves the statistic by n C)"),
    dict(id="C27", file="dptm/models/user_contributions.py",
         old="return _norm_histogram(user_count_matrix(X, user_ptr))",
         new="return _norm_histogram(X)",
         tests=USER,
         what="user-level norm histogram counts documents, not users (sensitivity = a user's "
              "number of documents, accounted as 1)"),
    dict(id="C28", file="dptm/models/user_contributions.py",
         old='order = np.argsort(users, kind="stable")',
         new="order = np.arange(users.size)",
         tests=USER + ["tests/test_distributed.py"],
         what="group_documents does not order the rows by user: the user blocks hold other "
              "users' documents (a user split over blocks, clipped twice)"),
    # ------------------------------------------------------------------ Gibbs
    dict(id="C29", file="dptm/models/private_gibbs.py",
         old="return ComposedEvent((noise_event, SelfComposedEvent(sampling, T)))",
         new="return ComposedEvent((noise_event, SelfComposedEvent(sampling, T - 1)))",
         tests=GIBBS + ["tests/test_private_gibbs_order.py", "tests/test_accounting_golden.py"],
         what="schedule 'first' accounts T - 1 sampling steps for T sweeps"),
    dict(id="C30", file="dptm/models/private_gibbs.py",
         old="            if it == T:\n                clip_buf = None",
         new="            if it == T + 1:\n                clip_buf = None",
         tests=GIBBS + ["tests/test_private_gibbs_recount.py", "tests/test_snapshot_factor.py",
                        "tests/test_parallel_gibbs.py"],
         what="the last snapshot is drawn into the int32 clipped buffer too: the released "
              "snapshot_ is never written (an uninitialised / stale array is published)"),
    dict(id="C31", file="dptm/noise/releases.py",
         old="self.event = GaussianEvent(sigma=sigma, sensitivity=_SQRT2, discrete=self.discrete,",
         new="self.event = GaussianEvent(sigma=sigma, sensitivity=1.0, discrete=self.discrete,",
         tests=GIBBS + DPLD,
         what="Gaussian snapshot event records L2 sensitivity 1 (a word replacement moves two "
              "counts: sqrt 2)"),
    dict(id="C32", file="dptm/models/subsampled_gibbs.py",
         old="return SelfComposedEvent(ComposedEvent((noise.event, sampling)), T)",
         new="return SelfComposedEvent(ComposedEvent((GatedEvent(noise.event, gamma), "
             "sampling)), T)",
         tests=GIBBS + ["tests/test_accounting_golden.py"],
         what="SUB-LDA's snapshot release amplified by the token subsampling (the paper's "
              "error: the snapshot depends on every token)"),
    dict(id="C33", file="dptm/models/subsampled_gibbs.py",
         old="T, beta, alpha_r = self.max_iter, self.topic_word_prior_, int(self.rdp_order)",
         new="T, beta, alpha_r = self.n_iter_, self.topic_word_prior_, int(self.rdp_order)",
         tests=GIBBS,
         what="SUB-LDA's report accounts the iterations the stopping rule ran, not max_iter "
              "(the stopping time depends on the data)"),
    dict(id="C34", file="dptm/models/private_gibbs.py",
         old="        snap, it = self._iterate(draw, step, noisy_at=plan.noisy_at, table=plan.table,",
         new="        snap, it = self._iterate(draw, step, noisy_at=plan.noisy_at, table=plan.table and ("
             "lambda s: plan.table(state.n_wk.astype(np.float64))),",
         tests=GIBBS + ["tests/test_output_privacy.py"],
         what="adaptive subsampling's frequent-word sets from the TRUE counts instead of the "
              "noisy snapshot"),
    # ------------------------------------------------------------------ SVI
    dict(id="C35", file="dptm/models/svi.py",
         old="scale = 1.0 / q           # from the public rate, never the realised size",
         new="scale = D / max(rows.size, 1)",
         tests=SVI + ["tests/test_svi_kernel.py", "tests/test_parallel_svi.py",
                      "tests/test_public_inputs_neighbours.py"],
         what="private Poisson step scaled by the realised minibatch size (and D): the update "
              "depends on the data beyond the noisy sum"),
    dict(id="C36", file="dptm/models/svi.py",
         old="self.sensitivity_ = base_sensitivity + slack",
         new="self.sensitivity_ = base_sensitivity",
         tests=SVI + ["tests/test_svi_kernel.py"],
         what="VIPS lattice release records the sensitivity without the rounding slack"),
    dict(id="C37", file="dptm/models/svi.py",
         old="base, n_coords = math.sqrt(2.0) * N, K * min(2 * N, V)",
         new="base, n_coords = float(N), K * min(2 * N, V)",
         tests=SVI + ["tests/test_public_inputs_neighbours.py"],
         what="replace-one adjacency (shuffle / sequential) with the add/remove sensitivity N "
              "instead of sqrt(2) N"),
    dict(id="C38", file="dptm/models/_truncate.py",
         old="keep = order[rank < max_length]",
         new="keep = order[rank <= max_length]",
         tests=SVI + ["tests/test_svi_kernel.py", "tests/test_robustness.py"],
         what="truncation keeps max_doc_length + 1 tokens (the sensitivity N is exceeded)"),
    # ------------------------------------------------------------------ TopicDP
    dict(id="C39", file="dptm/models/topicdp_calibration.py",
         old="return math.sqrt(alpha * sensitivity ** 2 / (2.0 * eps_r)), eps_r",
         new="return math.sqrt(alpha * sensitivity / (2.0 * eps_r)), eps_r",
         tests=TOPICDP,
         what="TopicDP renyi calibration with the sensitivity not squared"),
    dict(id="C40", file="dptm/models/topicdp_calibration.py",
         old="            return sigma, g, total\n",
         new="            return sigma, g, sensitivity\n",
         tests=TOPICDP,
         what="TopicDP lattice calibration returns the sensitivity without the rounding slack "
              "(recorded in the event)"),
    dict(id="C41", file="dptm/models/topicdp_sensitivity.py",
         old="k = int(math.ceil(h * (1.0 - gamma + rho + math.sqrt(log_inv / (2.0 * h)))))",
         new="k = int(math.ceil(h * (1.0 - gamma - rho + math.sqrt(log_inv / (2.0 * h)))))",
         tests=TOPICDP,
         what="sensitivity sampling's order statistic k with -rho: a smaller quantile of the "
              "sampled distances, less noise than the random-DP proof needs"),
    dict(id="C42", file="dptm/models/topicdp.py",
         old='f["sensitivity_"] = max(float(f["sensitivity_samples_"][k - 1]), 1e-9)',
         new='f["sensitivity_"] = max(float(f["sensitivity_samples_"][k - 2]), 1e-9)',
         tests=TOPICDP,
         what="TopicDP takes the (k-1)-th smallest sampled distance (off by one in the order "
              "statistic)"),
    # ------------------------------------------------------------------ release
    dict(id="C43", file="dptm/release.py",
         old='_NOT_PUBLIC = {"random_state", "verbose", "callback", "n_jobs"}',
         new='_NOT_PUBLIC = {"verbose", "callback", "n_jobs"}',
         tests=RELEASE + ["tests/test_secrets_by_value.py", "tests/test_private_gibbs_release.py",
                          "tests/test_svi_release.py"],
         what="a test-mode seed (random_state) published in the release's hyperparameters"),
    dict(id="C44", file="dptm/release.py",
         old="if type(version) is not int or version != FORMAT_VERSION:",
         new="if version != FORMAT_VERSION:",
         tests=RELEASE,
         what="Release.load accepts format_version true (a bool equals 1)"),
    dict(id="C45", file="dptm/release.py",
         old="if self.transform_max_iter > _MAX_TRANSFORM_ITER:",
         new="if self.transform_max_iter > 10 ** 18:",
         tests=RELEASE,
         what="Release (and a hostile release.json) accepts a transform_max_iter that never "
              "ends"),
    # ------------------------------------------------------------------ vocabulary
    dict(id="C46", file="dptm/vocab.py",
         old="self.vocabulary_ = np.array(sorted(words[released].tolist()), dtype=str)",
         new="self.vocabulary_ = np.array(words[released].tolist(), dtype=str)",
         tests=FDPTM + ["tests/test_cli_raw_text.py"],
         what="DP vocabulary released in first-appearance order (reveals the data's order), "
              "not sorted"),
    dict(id="C47", file="dptm/vocab.py",
         old="            if w.size > cap:\n",
         new="            if w.size > cap + 1:\n",
         tests=FDPTM,
         what="a user with Delta_0 + 1 distinct words contributes all of them (the threshold's "
              "delta is computed for Delta_0)"),
    dict(id="C48", file="dptm/vocab.py",
         old='raise ValueError(f"token_lists has more than {_MAX_CANDIDATES} distinct words, "',
         new='raise ValueError(f"token_lists has {n_words} distinct words, more than '
             '{_MAX_CANDIDATES}, "',
         tests=VOCAB + GUARD,
         what="the too-many-words refusal prints the private number of distinct words"),
    # ------------------------------------------------------------------ selection
    dict(id="C49", file="dptm/selection.py",
         old="candidate_rdp = np.max([a.rdp for a in acc], axis=0)",
         new="candidate_rdp = np.mean([a.rdp for a in acc], axis=0)",
         tests=SEL + BUDGET,
         what="private selection composes the MEAN candidate RDP instead of the largest"),
    dict(id="C50", file="dptm/selection.py",
         old="(1 + eta) * math.log(1 / gamma) / a)",
         new="math.log(1 / gamma) / a)",
         tests=SEL,
         what="Papernot-Steinke bound without the (1 + eta) factor on log(1/gamma) / mu"),
    # ------------------------------------------------------------------ CLI
    dict(id="C51", file="dptm/_cli_data.py",
         old='WORD_LEVEL = ("hdp-lda", "cdp-lda+", "zhu-lda", "sub-lda")',
         new='WORD_LEVEL = ("hdp-lda", "cdp-lda+", "zhu-lda")',
         tests=CLI + ["tests/test_fdptm.py"],
         what="sub-lda on raw text no longer refused: a word-level model behind a vocabulary "
              "chosen from the same text"),
    dict(id="C52", file="dptm/_cli_data.py",
         old="return eps_v, a.delta / 2.0, a.epsilon - eps_v, a.delta / 2.0",
         new="return eps_v, a.delta / 2.0, a.epsilon - eps_v, a.delta",
         tests=CLI + ["tests/test_cli_user_level.py"],
         what="the model stage gets the whole --delta on raw text (total 1.5 delta)"),
    dict(id="C53", file="dptm/cli.py",
         old='    if not private:\n        print(f"trained in',
         new='    if True:\n        print(f"trained in',
         tests=CLI + ["tests/test_cli_user_level.py"],
         what="the training time of a private fit printed (a timing channel on the data)"),
    dict(id="C54", file="dptm/cli.py",
         old='print(f"dptm: {a.model} ({desc}), K={a.topics}, on {data.name}", file=out)',
         new='print(f"dptm: {a.model} ({desc}), K={a.topics}, on {data.name} ('
             '{len(data.documents) if data.documents is not None else data.X_train.shape[0]}'
             ' documents)", file=out)',
         tests=CLI + ["tests/test_cli_user_level.py"],
         what="the private run's header prints the number of private documents"),
    # ------------------------------------------------------------------ pipeline
    dict(id="C55", file="dptm/pipeline.py",
         old="est.set_params(random_state=int(gen.integers(2**31 - 1)) if seeded else None)",
         new="est.set_params(random_state=int(gen.integers(2**31 - 1)))",
         tests=FDPTM + ["tests/test_fdptm_user_level.py", "tests/test_secrets_by_value.py"],
         what="FDPTM seeds its stages from the secret stream in the default mode: the seed "
              "sits on model_ / vocabulary_stage_ (whoever has the pickle replays the noise)"),
    dict(id="C56", file="dptm/pipeline.py",
         old="eps2 = float(mreport.epsilon(delta2))",
         new="eps2 = float(mreport.epsilon(delta1))",
         tests=FDPTM + ["tests/test_fdptm_user_level.py"],
         what="FDPTM states the model's epsilon at the vocabulary's delta while composing the "
              "model's delta (equal at the defaults)"),
    # ------------------------------------------------------------------ distributed
    dict(id="C57", file="dptm/distributed.py",
         old='pub["gathered_per_partition"] += _nbytes(out[0])',
         new='pub["gathered_per_partition"] += sum(_nbytes(o) for o in out)',
         tests=DIST,
         what="transfer_log['public'] counts every partition's statistic (reveals the number "
              "of partitions, which follows the data size)"),
    dict(id="C58", file="dptm/distributed.py",
         old="            if seen.setdefault(u, i) != i:\n",
         new="            if False:\n",
         tests=DIST + ["tests/test_private_vb_user_level.py"],
         what="fit_distributed(groups=) no longer refuses a user whose documents lie in two "
              "partitions (clipped twice: sensitivity 2 C)"),
    # ------------------------------------------------------------------ guardrails, data, local
    dict(id="C59", file="dptm/guardrails.py",
         old='n_docs = n if unit is not None and unit.startswith("documents") else None',
         new='n_docs = n if unit is not None and unit.startswith("documents") else n_docs',
         tests=GUARD + ["tests/test_private_vb_public_decisions.py"],
         what="the topics-vs-documents warning of a private fit uses the true document count "
              "when the report declares none public"),
    dict(id="C60", file="dptm/guardrails.py",
         old="if report.default_delta >= 1.0 / n:",
         new="if report.default_delta > 1.0 / n:",
         tests=GUARD,
         what="the delta >= 1/n guardrail misses delta = 1/n exactly"),
    dict(id="C61", file="dptm/datasets.py",
         old="if X.nnz != nnz:  # coo->csr summed duplicate",
         new="if X.nnz > nnz:  # coo->csr summed duplicate",
         tests=["tests/test_datasets.py", "tests/test_cli.py", "tests/test_robustness.py",
                "tests/test_fuzz.py"],
         what="load_uci_bow silently sums repeated (docID, wordID) pairs of a hostile file"),
    dict(id="C62", file="dptm/noise/local_randomizers.py",
         old="n_flips = int(rng.binomial(V, f / 2.0))",
         new="n_flips = int(rng.binomial(V, f))",
         tests=LOCAL + ["tests/test_empirical_dp.py"],
         what="client randomizer flips each bit with probability f (not f/2): at f = 1 every "
              "bit is inverted, no privacy at all"),
    # ------------------------------------------------------------------ kernels (rebuild)
    dict(id="C63", file="dptm/_kernels/cgs_snapshot.pxi",
         old="f0 = <float> ((dptm_clamp(s0[k], clip) + beta) * t)",
         new="f0 = <float> ((dptm_clamp(s0[k], INFINITY) + beta) * t)",
         tests=["tests/test_snapshot_factor.py", "tests/test_private_gibbs.py",
                "tests/test_private_gibbs_recount.py", "tests/test_parallel_gibbs.py"],
         what="the snapshot's word factor not clipped at C for every fourth word (the "
              "four-row path): eps_I unbounded for those words"),
    dict(id="C64", file="dptm/_kernels/cgs_exact.pxi",
         old="        if _uniform_below(rng, 2):\n            if y == 0:\n                continue\n",
         new="        if _uniform_below(rng, 2):\n",
         tests=MECH + ["tests/test_noise_package.py"] + FROZEN,
         what="CKS20 discrete Laplace accepts -0: P(0) doubled (the ratio P(0)/P(1) grows by "
              "2, epsilon by log 2)"),
    dict(id="C65", file="dptm/_kernels/cgs_exact.pxi",
         old="T.lo[m + 1] > v:",
         new="T.lo[m + 1] >= v:",
         tests=LTAB + MECH,
         what="dyadic Laplace stage 2 decides U < T_(m+1) when the L bits equal the "
              "threshold's (should resolve further): wrong pmf on undecided draws"),
    dict(id="C66", file="dptm/_kernels/cgs_private_sweep.pxi",
         old="scale[0] = -1.0 / log1p(-rate)",
         new="scale[0] = -1.0 / log(rate)",
         tests=GIBBS + ["tests/test_parallel_gibbs.py", "tests/test_empirical_privacy.py"],
         what="SUB-LDA's geometric gaps for rate <= 0.75 use the runs' scale: the token "
              "selection rate is not gamma (equal at gamma = 0.5)"),
]
