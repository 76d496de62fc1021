"""The sixth blind round of mutants, written from the source alone (tests/ unread).

Written by a helper session that read only dptm/ (and the test files' NAMES, from
``ls tests/``, to choose each mutant's ``tests``); it read neither the tests nor the earlier
rounds' mutant definitions (only the top of ``mutants_fresh5.py``, for the format). Same
format as the earlier rounds: ``id``, ``file``, ``old`` (an exact substring occurring once),
``new``, ``tests`` (chosen from the test files' names only), ``what``. Ids M01-M40 (the
prefix M is new), Python files only (none needs a rebuild). Run with
``run.py --set fresh6 --prebuilt``. Not run when written: every mutant was checked by
reading the code path to be reachable and to change a result. The classes aimed at:
off-by-one counts, lost factors, a wrong argument passed on or two swapped, a missing
validation, the wrong variable released, a leaked count or seed. The first run
(``--confirm``) is recorded in docs/records/2026-12-03-fresh-mutants-round6.md: 36 of 40
killed, 35 by the listed files; M33 was killed only by a frozen-draws hash, and M06, M14,
M18 and M26 survived: gaps, each now killed by a test written for it (``GAPS``).
"""

#: First-run gaps (survivors, or killed only by a frozen-draws hash), each killed since by a
#: test written for it in its subject's file.
GAPS = {
    "M06": "tests/test_accounting_recipes.py::test_park2016_iterations_count_a_partial_last_batch",
    "M14": "tests/test_releases.py::test_a_lattice_laplace_draw_states_its_effective_scale",
    "M18": "tests/test_local.py::test_randomize_input_errors",
    "M26": "tests/test_private_gibbs.py::test_trace_tokens_end_one_before_the_token_count",
    "M33": "tests/test_topicdp.py::test_runs_with_sklearn_models",
}

ACC = ["tests/test_accounting_primitives.py", "tests/test_accounting_golden.py",
       "tests/test_accounting_soundness.py", "tests/test_accounting_crosscheck.py"]
ACCOUNTANTS = ["tests/test_accounting_accountants.py", "tests/test_accounting_parallel.py",
               "tests/test_accounting_soundness.py", "tests/test_accounting_golden.py"]
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

FRESH6_MUTANTS = [
    # ---------------------------------------------------------------- accounting
    {"id": "M01", "file": "dptm/accounting/conversions.py",
     "old": "return min(adv, k * epsilon), min(1.0, k * delta + delta_slack)",
     "new": "return min(adv, k * epsilon), min(1.0, k * delta)",
     "tests": ACC,
     "what": "advanced composition forgets to add the slack delta' to the composed delta: "
             "the stated (epsilon, delta) is not implied (delta too small by delta')"},
    {"id": "M02", "file": "dptm/accounting/conversions.py",
     "old": "inner = (e - alpha * delta) * ratio ** alpha + alpha * delta",
     "new": "inner = (e - alpha * delta) * ratio ** (alpha - 1) + alpha * delta",
     "tests": ACC + ["tests/test_topicdp.py"],
     "what": "dp_to_rdp's second term (Asoodeh et al.) with the exponent alpha - 1 instead of "
             "alpha: a larger eps_R than (epsilon, delta) allows, so TopicDP's Renyi sigma is "
             "too small"},
    {"id": "M03", "file": "dptm/accounting/zcdp.py",
     "old": "den = math.sqrt(L + epsilon) + math.sqrt(L)",
     "new": "den = math.sqrt(L + epsilon) - math.sqrt(L)",
     "tests": ACC + ["tests/test_accounting_recipes.py"],
     "what": "the stable form of (sqrt(L + e) - sqrt(L))^2 written with the sign of the "
             "unstable one: zcdp_from_dp_target returns a rho far above the target (Park et "
             "al.'s recipe then calibrates far too little noise)"},
    {"id": "M04", "file": "dptm/accounting/calibration.py",
     "old": "            bad = mid\n    return good",
     "new": "            bad = mid\n    return bad",
     "tests": ["tests/test_accounting_accountants.py", "tests/test_accounting_golden.py",
               "tests/test_accounting_soundness.py"],
     "what": "log_bisect returns the end that fails the predicate: calibrate_gaussian's noise "
             "multiplier misses its (epsilon, delta) target (slightly, by up to tol)"},
    {"id": "M05", "file": "dptm/accounting/budget.py",
     "old": "gamma=min(sum(gammas), 0.999999) if gammas else None",
     "new": "gamma=max(gammas) if gammas else None",
     "tests": ["tests/test_budget.py", "tests/test_selection.py", "tests/test_topicdp.py"],
     "what": "the composed budget report takes the largest failure probability gamma of its "
             "random-DP releases instead of their union bound (the sum): the stated "
             "probability that the guarantee holds is too high"},
    {"id": "M06", "file": "dptm/accounting/recipes.py",
     "old": "return -(-n_seen // batch_size)",
     "new": "return n_seen // batch_size",
     "tests": ["tests/test_accounting_recipes.py", "tests/test_svi.py",
               "tests/test_accounting_golden.py"],
     "what": "Park et al.'s number of iterations J rounded down instead of up: a partial last "
             "minibatch is not counted, so the per-iteration budget is too large"},
    {"id": "M07", "file": "dptm/accounting/recipes.py",
     "old": "return 2.0 * math.log1p(clip / beta)",
     "new": "return math.log1p(clip / beta)",
     "tests": ["tests/test_accounting_recipes.py"] + GIBBS[:3],
     "what": "the inherent privacy eps_I = 2 log(C / beta + 1) of one Gibbs sampling step "
             "loses its factor 2: every Gibbs report understates epsilon"},
    {"id": "M08", "file": "dptm/accounting/rdp.py",
     "old": "first = (a - 1) * math.log1p(-q) + math.log1p((a - 1) * q)",
     "new": "first = a * math.log1p(-q) + math.log1p((a - 1) * q)",
     "tests": ["tests/test_accounting_primitives.py", "tests/test_accounting_recipes.py",
               "tests/test_accounting_golden.py"],
     "what": "the Zhu-Wang bound's first term with (1 - q)^alpha instead of (1 - q)^(alpha - 1): "
             "a smaller (unsound) subsampled RDP, no longer equal to the exact integer-order "
             "value"},
    {"id": "M09", "file": "dptm/accounting/discrete_pld.py",
     "old": "norm = math.sqrt(sum(s * s for s in shifts))",
     "new": "norm = sum(abs(s) for s in shifts)",
     "tests": ["tests/test_accounting_discrete_pld.py", "tests/test_private_gibbs_ledger.py"],
     "what": "the declared integer shift's norm computed in L1 instead of L2: the snapshot "
             "shift (1, 1) (L2 sqrt 2) is refused, and a shift whose L1 norm happens to match "
             "a smaller L2 sensitivity would be accepted"},
    {"id": "M10", "file": "dptm/accounting/accountants.py",
     "old": "            return event.count * e, event.count * d",
     "new": "            return event.count * e, d",
     "tests": ACCOUNTANTS,
     "what": "the pure/approximate-DP accountant composes count copies of an (e, d) event "
             "into (count e, d): the deltas of the repetitions are not added"},
    # ---------------------------------------------------------------- noise
    {"id": "M11", "file": "dptm/noise/mechanisms.py",
     "old": "frac = Fraction(math.ceil(Fraction(scale) * _MAX_DEN), _MAX_DEN)",
     "new": "frac = Fraction(math.floor(Fraction(scale) * _MAX_DEN), _MAX_DEN)",
     "tests": NOISE + ["tests/test_laplace_table.py"],
     "what": "the exact discrete Laplace's rational scale rounded down: less noise than asked "
             "(a calibrated scale no longer meets its epsilon)"},
    {"id": "M12", "file": "dptm/noise/mechanisms.py",
     "old": "per_coord = g if rounded == \"statistic\" else g / 2",
     "new": "per_coord = g / 2",
     "tests": NOISE[:3] + ["tests/test_svi.py", "tests/test_topicdp.py"],
     "what": "the lattice rounding slack of a rounded statistic charged g/2 per coordinate "
             "instead of g (two neighbours can round apart by a whole step): the recorded "
             "sensitivity of SVI's and TopicDP's lattice releases is too small"},
    {"id": "M13", "file": "dptm/noise/releases.py",
     "old": "parts.append(SelfComposedEvent(ev, j - i + 1) if j > i else ev)",
     "new": "parts.append(SelfComposedEvent(ev, j - i) if j > i else ev)",
     "tests": ["tests/test_releases.py", "tests/test_noise_package.py",
               "tests/test_private_vb_recorded_sigmas.py", "tests/test_svi_ledger.py"],
     "what": "Ledger.composed counts a run of equal releases one short: every report composed "
             "from a ledger with a repeated release omits one release"},
    {"id": "M14", "file": "dptm/noise/releases.py",
     "old": "return noisy, LaplaceEvent(scale=self.scale_, sensitivity=self.sensitivity,",
     "new": "return noisy, LaplaceEvent(scale=self.scale, sensitivity=self.sensitivity,",
     "tests": ["tests/test_releases.py", "tests/test_noise_package.py", "tests/test_dp_vocabulary.py",
               "tests/test_topicdp.py"],
     "what": "the lattice Laplace release records the nominal scale instead of the effective "
             "one drawn: the ledger no longer states what was sampled"},
    {"id": "M15", "file": "dptm/noise/secret.py",
     "old": "todo += [e.__cause__, e.__context__, *getattr(e, \"exceptions\", ())]",
     "new": "todo += [e.__cause__, *getattr(e, \"exceptions\", ())]",
     "tests": ["tests/test_failed_fit_forgets_secrets.py", "tests/test_secret_randomness.py",
               "tests/test_secrets_by_value.py"],
     "what": "a failed private fit clears the frames of the exception and its explicit "
             "causes but not of its implicit context: an exception raised while handling "
             "another keeps the secret generator and noise in the context's traceback"},
    {"id": "M16", "file": "dptm/noise/local_randomizers.py",
     "old": "n_flips = int(rng.binomial(V, f / 2.0))",
     "new": "n_flips = int(rng.binomial(V, f))",
     "tests": LOCAL,
     "what": "randomize flips each bit with probability f instead of f/2 (a bit replaced by a "
             "fair coin flips half the time): at f = 1 every bit is flipped, a deterministic, "
             "invertible output with no privacy"},
    {"id": "M17", "file": "dptm/noise/local_randomizers.py",
     "old": "return flip_from_epsilon(float(epsilon) / n_bits)",
     "new": "return flip_from_epsilon(float(epsilon))",
     "tests": LOCAL,
     "what": "f_from_epsilon gives every bit the whole epsilon instead of epsilon / n_bits: "
             "the document's local epsilon is n_bits times the target"},
    {"id": "M18", "file": "dptm/noise/local_randomizers.py",
     "old": "if ids.min() < 0 or ids.max() >= V or np.unique(ids).size != V:",
     "new": "if ids.min() < 0 or ids.max() > V or np.unique(ids).size != V:",
     "tests": LOCAL[:2] + ["tests/test_robustness.py"],
     "what": "a vocabulary dict mapping its V words to ids with a gap (max id V) is accepted: "
             "word id V lies outside the V bits randomized"},
    # ---------------------------------------------------------------- PrivateBatchLDA
    {"id": "M19", "file": "dptm/models/private_vb.py",
     "old": "stat = statistic(beta, alpha, C, g, r.statistic == \"presence\")",
     "new": "stat = statistic(beta, alpha, g, C, r.statistic == \"presence\")",
     "tests": VB,
     "what": "the clip norm and the lattice step passed to the statistic in swapped order: "
             "contributions clipped at g, rounded to a lattice of C (the release is garbage, "
             "and its sensitivity is not the C recorded)"},
    {"id": "M20", "file": "dptm/models/vb_denoise.py",
     "old": "out[:, mean <= _FIRST_MEAN_THRESHOLD * sd / math.sqrt(K)] = 0.0",
     "new": "out[:, mean <= _FIRST_MEAN_THRESHOLD * sd] = 0.0",
     "tests": ["tests/test_private_vb_denoise.py", "tests/test_private_vb.py"],
     "what": "the first release's word-mean threshold forgets that a mean over K topics has "
             "noise sd sd / sqrt(K): far too many words are zeroed"},
    {"id": "M21", "file": "dptm/models/vb_denoise.py",
     "old": "ratio = np.einsum(\"kw,kw->w\", z, z) / (K - 1)",
     "new": "ratio = np.einsum(\"kw,kw->w\", z, z) / K",
     "tests": ["tests/test_private_vb_denoise.py", "tests/test_private_vb.py"],
     "what": "the sample variance over the topics divided by K instead of K - 1 (biased): the "
             "shrinkage keeps too little of every word"},
    {"id": "M22", "file": "dptm/models/user_contributions.py",
     "old": "if g is None or (isinstance(g, numbers.Real) and g != g):",
     "new": "if g is None:",
     "tests": VB_USER,
     "what": "a NaN user id in an object array is no longer refused: its documents become "
             "users of their own, so a user's documents can be split past the user-level bound"},
    # ---------------------------------------------------------------- Gibbs
    {"id": "M23", "file": "dptm/models/private_gibbs.py",
     "old": "return 2.0 * math.log1p(n / beta) + 2.0 * (n - 1.0) * math.log1p(1.0 / beta)",
     "new": "return 2.0 * math.log1p(n / beta) + (n - 1.0) * math.log1p(1.0 / beta)",
     "tests": GIBBS,
     "what": "a plain CGS sweep's epsilon loses the factor 2 of its second term: the 'last' "
             "schedule's report understates epsilon"},
    {"id": "M24", "file": "dptm/models/private_gibbs.py",
     "old": "return ComposedEvent((noise_event, SelfComposedEvent(sampling, T)))",
     "new": "return ComposedEvent((noise_event, sampling))",
     "tests": GIBBS[:3] + ["tests/test_private_gibbs_order.py"],
     "what": "the 'first' noise schedule accounts one sampling step instead of T: every "
             "sweep samples from the clipped snapshot, so the report understates epsilon"},
    {"id": "M25", "file": "dptm/models/private_gibbs.py",
     "old": "\"epsilon_per_iter_\": (2.0 / noise.scale if",
     "new": "\"epsilon_per_iter_\": (1.0 / noise.scale if",
     "tests": GIBBS[:3],
     "what": "epsilon_per_iter_ forgets the L1 sensitivity 2 of the snapshot (two counts "
             "change): the released attribute halves the per-snapshot epsilon"},
    {"id": "M26", "file": "dptm/models/private_gibbs.py",
     "old": "if idx.min() < 0 or idx.max() >= n_tokens:",
     "new": "if idx.min() < 0 or idx.max() > n_tokens:",
     "tests": ["tests/test_private_gibbs.py", "tests/test_gibbs.py", "tests/test_robustness.py"],
     "what": "trace_tokens = n_tokens passes the check: an out-of-range index reaches the "
             "trace (an IndexError instead of the ValueError naming the range)"},
    # ---------------------------------------------------------------- SVI / VIPS
    {"id": "M27", "file": "dptm/models/svi.py",
     "old": "base, n_coords = math.sqrt(2.0) * N, K * min(2 * N, V)",
     "new": "base, n_coords = float(N), K * min(2 * N, V)",
     "tests": SVI,
     "what": "substitution adjacency (shuffle/sequential) records sensitivity N instead of "
             "sqrt(2) N: the noise is sqrt(2) too small for the neighbouring relation stated"},
    {"id": "M28", "file": "dptm/models/svi.py",
     "old": "self._sigma_draw_ = sigma_c * self.sensitivity_ / base_sensitivity",
     "new": "self._sigma_draw_ = sigma_c",
     "tests": SVI,
     "what": "the lattice SVI's sigma is not scaled up for the rounding slack added to the "
             "sensitivity: the recorded noise multiplier falls below the calibrated one and "
             "the run exceeds its target"},
    {"id": "M29", "file": "dptm/models/_truncate.py",
     "old": "keep = order[rank < max_length]",
     "new": "keep = order[rank <= max_length]",
     "tests": ["tests/test_svi.py", "tests/test_svi_adversarial_neighbours.py",
               "tests/test_robustness.py"],
     "what": "truncation keeps max_length + 1 tokens of a long document: its contribution "
             "exceeds the length cap N the sensitivity is computed from"},
    # ---------------------------------------------------------------- TopicDP
    {"id": "M30", "file": "dptm/models/topicdp_sensitivity.py",
     "old": "k = int(math.ceil(h * (1.0 - gamma + rho + math.sqrt(log_inv / (2.0 * h)))))",
     "new": "k = int(math.ceil(h * (1.0 - gamma - rho + math.sqrt(log_inv / (2.0 * h)))))",
     "tests": TOPICDP[:2] + ["tests/test_accounting_recipes.py"],
     "what": "the order statistic k of eq. (4) with -rho for +rho: a lower quantile of the "
             "sampled distances, so the sampled sensitivity is too small for gamma"},
    {"id": "M31", "file": "dptm/models/topicdp_calibration.py",
     "old": "sigma = g * math.ceil(sigma / g)",
     "new": "sigma = g * math.floor(sigma / g)",
     "tests": TOPICDP[:2],
     "what": "the lattice Gaussian's sigma rounded DOWN to whole lattice steps: below the "
             "calibrated sigma, the release exceeds its (epsilon, delta)"},
    {"id": "M32", "file": "dptm/models/topicdp_calibration.py",
     "old": "return 2.0 * n_rows / check_positive(epsilon, \"epsilon\")",
     "new": "return n_rows / check_positive(epsilon, \"epsilon\")",
     "tests": TOPICDP[:2],
     "what": "the Laplace baseline's scale uses L1 sensitivity m instead of 2 m (two "
             "probability vectors differ by up to 2): half the noise pure epsilon needs"},
    {"id": "M33", "file": "dptm/models/topicdp.py",
     "old": "f[\"sensitivity_samples_\"] = np.sort(d)",
     "new": "f[\"sensitivity_samples_\"] = -np.sort(-d)",
     "tests": TOPICDP[:2],
     "what": "the sampled distances sorted in decreasing order: the 'k-th smallest' read is "
             "the (h - k + 1)-th smallest, a low quantile, so the sensitivity is far too small"},
    # ---------------------------------------------------------------- vocabulary, selection
    {"id": "M34", "file": "dptm/vocab.py",
     "old": "            if w.size > cap:",
     "new": "            if w.size > cap + 1:",
     "tests": VOCAB,
     "what": "a user with exactly max_contribution + 1 distinct words is not capped: their "
             "contribution exceeds Delta_0, which the threshold's delta is computed for"},
    {"id": "M35", "file": "dptm/vocab.py",
     "old": "released = cand[noisy > rho]",
     "new": "released = cand[H[cand] > rho]",
     "tests": VOCAB,
     "what": "the released vocabulary is thresholded on the true weights instead of the "
             "noisy ones: no noise protects which words are released"},
    {"id": "M36", "file": "dptm/vocab.py",
     "old": "tail = -np.expm1(np.log1p(-delta / 2.0) / t)",
     "new": "tail = -np.expm1(np.log1p(-delta) / t)",
     "tests": ["tests/test_dp_vocabulary.py", "tests/test_fdptm.py"],
     "what": "the policy Gaussian threshold spends the whole delta instead of its half (the "
             "other half goes to the Gaussian noise): total delta 1.5 times the target"},
    {"id": "M37", "file": "dptm/selection.py",
     "old": "candidate_rdp = np.max([a.rdp for a in acc], axis=0)",
     "new": "candidate_rdp = np.min([a.rdp for a in acc], axis=0)",
     "tests": ["tests/test_selection.py", "tests/test_budget.py"],
     "what": "private selection accounts the cheapest candidate's RDP instead of the worst "
             "one's: the selection's epsilon is understated whenever candidates differ"},
    # ---------------------------------------------------------------- CLI, release, guardrails
    {"id": "M38", "file": "dptm/_cli_data.py",
     "old": "return eps_v, a.delta / 2.0, a.epsilon - eps_v, a.delta / 2.0",
     "new": "return eps_v, a.delta / 2.0, a.epsilon - eps_v, a.delta",
     "tests": ["tests/test_cli_raw_text.py", "tests/test_cli.py", "tests/test_cli_strict.py"],
     "what": "a raw-text run gives the model the whole --delta after the vocabulary took "
             "half of it: the two stages compose to 1.5 delta"},
    {"id": "M39", "file": "dptm/release.py",
     "old": "_NOT_PUBLIC = {\"random_state\", \"verbose\", \"callback\", \"n_jobs\"}",
     "new": "_NOT_PUBLIC = {\"verbose\", \"callback\", \"n_jobs\"}",
     "tests": ["tests/test_release.py", "tests/test_output_privacy.py",
               "tests/test_secret_randomness.py", "tests/test_cli.py"],
     "what": "a seeded (test-mode) fit's random_state is written into the release's "
             "hyperparameters: whoever reads release.json can regenerate and subtract the noise"},
    {"id": "M40", "file": "dptm/guardrails.py",
     "old": "n_docs = n if unit is not None and unit.startswith(\"documents\") else None",
     "new": "n_docs = n if unit is not None and unit.startswith(\"documents\") else n_docs",
     "tests": ["tests/test_guardrails.py", "tests/test_refusals_name_no_private_count.py",
               "tests/test_output_privacy.py"],
     "what": "check_fitted falls back on len(X) for a private model whose report declares no "
             "public count: the topic-count warning then depends on the private number of "
             "documents (D < K against D >= K)"},
]
