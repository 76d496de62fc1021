"""Everything that decides what an attacker cannot predict: the secret generator and the
exact noise samplers, in one place for an auditor.

- :mod:`dptm.noise.secret`: the secret AES-128-CTR generator keyed from the operating system
  (``private_generator``, ``secret_generator``), ``public_seed`` for post-processing, the
  ``private_fit`` decorator, ``shuffle_within_segments`` (secret token orders).
- :mod:`dptm.noise.mechanisms` (also importable as ``dptm.mechanisms``): the Python entry
  point of every sampler (Laplace, Gaussian, exact discrete Laplace and Gaussian), the
  lattice rule (``lattice_granularity``, ``finest_lattice_granularity``, the rounding slack)
  and the one choice of exact discrete Gaussian sampler (``discrete_gaussian_table``).
- The exact samplers' tables and their proofs: :mod:`dptm.noise.laplace_table` (dyadic
  discrete Laplace by inversion), :mod:`dptm.noise.gauss_inversion` (discrete Gaussian by
  inversion), :mod:`dptm.noise.gauss_table` (alias-table proposal), :mod:`dptm.noise.exact`
  (the exact rational fallback of their comparisons). The samplers themselves run in C in
  ``dptm._cgs`` (``_kernels/cgs_exact.pxi``), imported on the first draw.

Nothing is imported here, so loading one of these modules loads no kernel.
"""
