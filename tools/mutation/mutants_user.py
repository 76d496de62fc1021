"""Mutants of the user-level PrivateBatchLDA (``fit(X, groups=...)``: the per-user
contributions of ``dptm/models/user_contributions.py``, their use in ``private_vb.py`` and
the whole-user partitions of ``distributed.py``), in the format of ``mutants.py``; run with
``python tools/mutation/run.py --set user --prebuilt``.
"""

USER = ["tests/test_private_vb_user_level.py"]
UC = "dptm/models/user_contributions.py"

USER_MUTANTS = [
    dict(id="U01", file=UC,
         edits=[("            owner = np.repeat(np.arange(stop - start), "
                 "np.diff(user_ptr[start:stop + 1]))",
                 "            owner = np.arange(d1 - d0)"),
                ("            uptr = np.searchsorted(key[first] // V, np.arange(stop - start + 1))",
                 "            uptr = np.searchsorted(key[first] // V, np.arange(d1 - d0 + 1))")],
         tests=USER, what="each DOCUMENT's contribution clipped to C, not each user's sum "
                          "(a user with n documents moves the statistic by up to n C)"),
    dict(id="U02", file=UC, old="        return _norm_histogram(user_count_matrix(X, user_ptr))",
         new="        return _norm_histogram(X)", tests=USER,
         what="the norm histogram counts documents (a user moves up to n bins: sensitivity n, "
              "recorded 1)"),
    dict(id="U03", file=UC,
         old="            uptr = np.searchsorted(key[first] // V, np.arange(stop - start + 1))",
         new="            uptr = np.unique(np.r_[np.searchsorted(key[first] // V, "
             "np.arange(stop - start + 1)), np.arange(0, first.size, 4)])",
         tests=USER, what="a user's (user, word) pairs split in pieces (as across E-step "
                          "chunks) and each piece clipped to C separately"),
    dict(id="U04", file=UC, old='    order = np.argsort(users, kind="stable")',
         new="    order = np.arange(len(users))", tests=USER,
         what="documents not ordered by user: the user blocks mix documents of several users"),
    dict(id="U05", file="dptm/models/private_vb.py",
         old="            fit.ledger.composed(), unit,",
         new='            fit.ledger.composed(), "document",', tests=USER,
         what="a user-level fit's report states document-level adjacency"),
    dict(id="U06", file="dptm/models/vb_statistic.py",
         old="            numerators, et, eb_t, norm * (1 - 2.0 ** -40))",
         new="            numerators, et, eb_t, norm * 2)", tests=USER,
         what="each user clipped to 2 C while the event records sensitivity C"),
    dict(id="U07", file="dptm/_kernels/svi_clipped_sum.pxi",
         old="            if not _lattice_row_ok(lat, K, a.bound, a.limit, &sq):",
         new="            if False and not _lattice_row_ok(lat, K, a.bound, a.limit, &sq):",
         tests=USER,
         what="the exact per-user integer norm check of the lattice contribution skipped"),
    dict(id="U08", file="dptm/models/private_vb.py",
         old="            Xs, user_ptr = group_documents(X, groups)",
         new="            Xs, user_ptr = group_documents(X, np.arange(X.shape[0]))", tests=USER,
         what="groups validated but ignored: document-level clipping reported as user level"),
    dict(id="U09", file="dptm/distributed.py",
         old="            if seen.setdefault(u, i) != i:", new="            if False:",
         tests=USER, what="fit_distributed accepts a user whose documents span two "
                          "partitions (clipped apart on each: up to 2 C)"),
    dict(id="U10", file="dptm/distributed.py",
         old="        cuts = user_start[np.minimum(np.searchsorted(user_start, target), "
             "len(user_start) - 1)]",
         new="        cuts = target.round().astype(np.int64)", tests=USER,
         what="an in-process matrix split into row blocks that cut users"),
    dict(id="U11", file="dptm/models/private_vb.py",
         old='                                   unit + "s", count_sd)',
         new='                                   "documents", count_sd)', tests=USER,
         what="the uninformative-model warning calls the noisy user count a document count"),
    dict(id="U12", file=UC,
         old="    out = np.empty(len(seq), dtype=object)\n    for i, g in enumerate(seq):\n"
             "        out[i] = g\n    return out",
         new="    return np.asarray(seq)", tests=USER,
         what="a list of ids converted to one type: [1, '1'] or 2**53, 2**53 + 1 merged into "
              "one user (their documents clipped together: 1.41 C)"),
    dict(id="U13", file="dptm/distributed.py",
         old="        groups = user_id_array(groups)      # the same ids as the driver's check reads",
         new="        groups = np.asarray(groups)", tests=USER,
         what="a dask.bag partition's ids converted: a user split over partitions passes the "
              "whole-users check (clipped once per partition)"),
    dict(id="U14", file="dptm/datasets.py",
         old='    return [line[:-1] if line.endswith("\\r") else line for line in text.split("\\n")]',
         new="    return text.splitlines()", tests=["tests/test_datasets.py"],
         what="lines split at U+2028 / U+0085 / form feeds: a valid JSONL record refused "
              "naming its line, one text line read as two documents"),
    dict(id="U15", file="dptm/vocab.py",
         old="            uidx = check_groups(users, n_docs)",
         new="            uidx = np.unique(np.asarray(users), return_inverse=True)[1]",
         tests=["tests/test_dp_vocabulary.py"],
         what="DPVocabulary's users defined apart from the model's (mixed ids refused, [1, '1'] "
              "merged)"),
]
