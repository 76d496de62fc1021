"""``--save`` refused before any work where it cannot do what it says: with ``--epsilons``
(the curve's fits are not saved) and inside the ``--data`` folder (the saved files would be
documents of the next run)."""
import argparse
import os

import pytest

from dptm._cli_data import check_save_target

from _cli import refused






@pytest.fixture
def texts(tmp_path):
    folder = tmp_path / "texts"
    folder.mkdir()
    for i, words in enumerate(["rain storm flood", "vote poll senate", "storm river rain"]):
        (folder / f"doc{i}.txt").write_text(words)
    return folder


# ------------------------------------------------------------------ --epsilons with --save
@pytest.mark.parametrize("extra", [[], ["--overwrite"]])
def test_epsilons_with_save_is_refused_before_any_fit(extra, tmp_path, capsys, no_work):
    # catches --save silently ignored by the curve (exit 0, nothing written) and a refusal
    # that comes after the fits (privacy_utility_curve and load_corpus are forbidden)
    rel = tmp_path / "rel"
    err = refused(capsys, "fit", "--model", "vips", "--epsilons", "1,4", "--save", rel, *extra)
    assert err.startswith("dptm fit: error: ")
    assert "--save" in err and "--epsilons" in err and "--epsilon E --save DIR" in err
    assert not rel.exists()


# ------------------------------------------------------------------ --save inside --data
@pytest.mark.parametrize("where", ["rel", "sub/rel", "."])
@pytest.mark.parametrize("extra", [[], ["--overwrite"]])
def test_fit_save_inside_the_data_folder_is_refused_before_any_work(
        where, extra, texts, capsys, no_work):
    # catches a release written where the next run reads every file as a document; with
    # --overwrite too (it allows replacing a release, not feeding it back as data)
    target = texts / where
    before = sorted(os.listdir(texts))
    err = refused(capsys, "fit", "--data", texts, "--save", target, *extra)
    assert err.startswith("dptm fit: error: --save ")
    assert f"--data {texts}" in err and "inside" in err and "documents" in err
    assert sorted(os.listdir(texts)) == before            # nothing written into the data


def test_save_through_a_symlink_into_the_data_folder_is_refused(texts, tmp_path, capsys,
                                                                no_work):
    # the name differs, the folder is the same: resolved before comparing
    link = tmp_path / "alias"
    link.symlink_to(texts, target_is_directory=True)
    err = refused(capsys, "fit", "--data", texts, "--save", link / "rel")
    assert "--save" in err and "--data" in err


def test_audit_save_inside_the_data_folder_is_refused(texts, capsys, no_work):
    err = refused(capsys, "audit", "--data", texts, "--save", texts / "stats")
    assert err.startswith("dptm audit: error: --save ") and "--data" in err
    assert not (texts / "stats.npz").exists()


def _args(save, data, overwrite=False, command="fit"):
    return argparse.Namespace(save=str(save), data=str(data), overwrite=overwrite,
                              command=command)


def test_save_beside_or_above_the_data_is_accepted(texts, tmp_path):
    # the check reads paths only; a release next to the data, or in a folder holding it
    # (with --overwrite), is not read back by a run on --data
    check_save_target(_args(tmp_path / "rel", texts))
    check_save_target(_args(tmp_path, texts, overwrite=True))
    check_save_target(_args(tmp_path / "texts2", texts))      # a shared name prefix only
    notes = tmp_path / "notes.jsonl"
    notes.write_text('{"text": "a b"}\n')
    check_save_target(_args(tmp_path / "rel", notes))
    check_save_target(_args(tmp_path / "rel", "demo"))


def test_save_inside_a_bind_mounted_alias_is_caught_by_identity(texts, tmp_path, monkeypatch):
    # a folder reached under another name that realpath does not resolve (a bind mount):
    # caught by comparing the nearest existing ancestor with the data folder by identity
    alias = tmp_path / "mnt"
    alias.mkdir()
    real_samefile = os.path.samefile

    def samefile(a, b):
        if os.path.realpath(a) == str(alias) and os.path.realpath(b) == str(texts):
            return True
        return real_samefile(a, b)

    monkeypatch.setattr(os.path, "samefile", samefile)
    with pytest.raises(ValueError, match="inside --data"):
        check_save_target(_args(alias / "new" / "rel", texts))
