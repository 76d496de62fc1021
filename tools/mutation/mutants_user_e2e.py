"""Mutants of the user-level pipeline end to end: ``FullyPrivateTopicModel(...).fit(texts,
groups=...)`` (``dptm/pipeline.py``) and ``dptm fit --group-key`` (``dptm/cli.py``,
``dptm/_cli_data.py``), in the format of ``mutants.py``; run with
``python tools/mutation/run.py --set user-e2e --prebuilt``.
"""

FDPTM_USER = ["tests/test_fdptm_user_level.py", "tests/test_fdptm.py"]
CLI_USER = ["tests/test_cli_user_level.py"]
PIPE = "dptm/pipeline.py"

E2E_MUTANTS = [
    dict(id="E01", file=PIPE, old='            adjacency = "user"\n',
         new='            adjacency = "document"\n', tests=FDPTM_USER,
         what="the composed report of a user-level pipeline says document level"),
    dict(id="E02", file=PIPE, old='users is not None and report.adjacency != "user"):',
         new="False):", tests=FDPTM_USER,
         what="a model stage that took groups but reported document level is published as "
              "user level"),
    dict(id="E03", file=PIPE, old="        total_delta = v_event.delta + delta2",
         new="        total_delta = delta2", tests=FDPTM_USER,
         what="the vocabulary stage's delta left out of the user-level total"),
    dict(id="E04", file="dptm/cli.py",
         old="        return model.fit(a.documents) if groups is None else model.fit(a.documents,\n"
             "                                                                       groups=groups)",
         new="        return model.fit(a.documents)", tests=CLI_USER,
         what="--group-key on raw text: the groups never reach the pipeline (document level)"),
    dict(id="E05", file="dptm/cli.py",
         old="    if groups is not None:\n        return model.fit(X_train, groups=groups)\n",
         new="", tests=CLI_USER,
         what="--group-key with a public vocabulary: the groups never reach the model"),
    dict(id="E06", file="dptm/_cli_data.py", old="    if a.model not in USER_LEVEL:",
         new="    if False:", tests=CLI_USER,
         what="--group-key accepted with a model without a user-level guarantee"),
    dict(id="E07", file="dptm/_cli_data.py",
         edits=[("            if group_key not in rec:", "            if False:"),
                ("            groups.append(_group_id(path, f\"line {n}\", rec[group_key], group_key))",
                 "            groups.append(_group_id(path, f\"line {n}\", rec.get(group_key, n), "
                 "group_key))")], tests=CLI_USER,
         what="a JSONL record without the user id becomes a user of its own (line number)"),
    dict(id="E08", file="dptm/_cli_data.py",
         old="            groups.append(_group_id(path, where, row[gcol].strip(), group_key))",
         new="            groups.append(_group_id(path, where, row[gcol].strip() or where, "
             "group_key))", tests=CLI_USER,
         what="a CSV row with an empty user id becomes a user of its own"),
    dict(id="E09", file="dptm/cli.py", old="                _SHOWN.add(msg)", new="                pass",
         tests=CLI_USER, what="the small-vocabulary warning shown twice (stdout and stderr)"),
    dict(id="E10", file="dptm/cli.py",
         old='    if a.non_private and getattr(a, "epsilon_given", False):',
         new="    if False:", tests=CLI_USER,
         what="--epsilon with --non-private silently ignored"),
]
