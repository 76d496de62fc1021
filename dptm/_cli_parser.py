"""The argument parser of ``dptm``: every error in argparse's form, one line, under the
subcommand's name (``dptm fit: error: ...``), a usage error ending with where to look."""
import argparse

__all__ = ["Parser", "error_line"]


def error_line(prog, message):
    """Every error of the command, argparse's and the command's own refusals alike, in
    argparse's form: ``dptm fit: error: ...`` (the subcommand's prog)."""
    return f"{prog}: error: {message}\n"


class Parser(argparse.ArgumentParser):
    """A bad flag gives one line and where to look, not the whole usage block."""

    def error(self, message):
        self.exit(2, error_line(self.prog, f"{message} (see '{self.prog} --help')"))

    def parse_args(self, args=None, namespace=None):
        # argparse reports a subcommand's unknown flag from the top parser ("dptm: error:"):
        # name the subcommand, whose --help lists its flags
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            prog = " ".join(filter(None, (self.prog, getattr(parsed, "command", None))))
            self.exit(2, error_line(prog, f"unrecognized arguments: {' '.join(extra)} "
                                          f"(see '{prog} --help')"))
        return parsed
