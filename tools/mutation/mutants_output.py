"""Mutants of the output engineer's code (TopicDP, DPVocabulary, FDPTM, the local randomizer),
in the format of ``mutants.py``; each was applied by hand and killed by the listed tests.
To run them with ``run.py``: ``from mutants_output import MUTANTS as _OUT; MUTANTS += _OUT``.
"""

TOPICDP = ["tests/test_topicdp.py", "tests/test_output_privacy.py"]
VOCAB = ["tests/test_dp_vocabulary.py", "tests/test_fdptm.py"]
PIPE = ["tests/test_fdptm.py", "tests/test_output_privacy.py"]
LOCAL = ["tests/test_output_privacy.py", "tests/test_local.py"]

MUTANTS = [
    # the lattice releases TopicDP draws through (dptm/noise/releases.py)
    dict(id="O01", file="dptm/noise/releases.py",
         old="            statistic, self.sigma, generator, granularity=self.granularity)",
         new="            statistic, self.sigma / 2, generator, granularity=self.granularity)\n"
             "        self.sigma_ *= 2",
         tests=TOPICDP, what="a lattice Gaussian release draws half the noise its event records"),
    dict(id="O02", file="dptm/models/topicdp.py",
         old="            release = (LatticeGaussianRelease(scale, total, g, label=label) if exact",
         new="            release = (LatticeGaussianRelease(scale / 2, total, g / 2, label=label) "
             "if exact",
         tests=TOPICDP, what="TopicDP half noise with the event changed to match"),
    dict(id="O03", file="dptm/noise/releases.py",
         old="            statistic, self.scale, generator, granularity=self.granularity)",
         new="            statistic, self.scale / 2, generator, granularity=self.granularity)\n"
             "        self.scale_ *= 2",
         tests=TOPICDP, what="a lattice Laplace release (TopicDP's baseline) draws half its "
                             "recorded scale"),
    dict(id="O04", file="dptm/models/topicdp.py", old="                S_X, S_g = ref, ref_gidx\n",
         new="                S_X, S_g = X, gidx\n", tests=TOPICDP,
         what="sensitivity sampled on the private data although reference_X was given"),
    dict(id="O05", file="dptm/models/topicdp.py",
         old='            ref = self._check_X(self.reference_X, "reference_X")',
         new='            ref = self._check_X(X, "reference_X")', tests=TOPICDP,
         what="the private corpus used as the 'public' reference"),
    dict(id="O06", file="dptm/models/topicdp_calibration.py",
         old="        need = sensitivity + rounding_slack(g, n_coords)", new="        need = sensitivity",
         tests=TOPICDP, what="lattice rounding slack not added to the recorded sensitivity"),
    dict(id="O07", file="dptm/models/topicdp.py",
         old="        fit_seed = public_seed(fit.generator, fit.seeded)\n",
         new="        fit_seed = public_seed(fit.generator, fit.seeded)\n        self._gen = fit.generator\n",
         tests=TOPICDP, what="the secret generator kept on the fitted estimator (pickled)"),
    dict(id="O08", file="dptm/vocab.py",
         old="out, _, eff = lattice_laplace(weights, scale, gen, granularity=granularity)",
         new="out, _, eff = lattice_laplace(weights, scale / 2, gen, granularity=granularity); eff = scale",
         tests=VOCAB, what="DPVocabulary adds half the Laplace noise (issue #14)"),
    dict(id="O09", file="dptm/vocab.py", old="rho += 2.0 * g", new="rho += 0.0",
         tests=VOCAB, what="threshold not raised for the lattice rounding"),
    dict(id="O10", file="dptm/vocab.py",
         old="true_delta = (delta - delta_thr) + _true_delta_single(noise, scale, rho, cap)",
         new="true_delta = (delta - delta_thr) + _true_delta_single(noise, scale, rho, 1)",
         tests=VOCAB, what="paper_threshold's delta not computed for the cap's Delta_0 words"),
    dict(id="O11", file="dptm/pipeline.py",
         old='        notes.extend(f"stage 2: {n}" for n in mreport.notes)\n', new="",
         tests=PIPE, what="FDPTM drops the model stage's caveats (keyword ids NOT covered)"),
    dict(id="O12", file="dptm/pipeline.py",
         old="random_state=int(gen.integers(2**31 - 1)) if seeded else None",
         new="random_state=int(gen.integers(2**31 - 1))", tests=PIPE,
         what="FDPTM stores a seed derived from the secret stream on its stages"),
    dict(id="O13", file="dptm/noise/local_randomizers.py", old="flips = _bernoulli_positions(M * V, f / 2.0, rng)",
         new="flips = _bernoulli_positions(M * V, f / 4.0, rng)", tests=LOCAL,
         what="randomize_matrix flips half as often as its RandomizedResponseEvent says"),
    dict(id="O14", file="dptm/noise/local_randomizers.py", old="n_flips = int(rng.binomial(V, f / 2.0))",
         new="n_flips = int(rng.binomial(V, f / 4.0))", tests=LOCAL,
         what="randomize flips half as often as its event says"),
]
