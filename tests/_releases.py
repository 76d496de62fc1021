"""Helpers of the tests that steer what a release returns (dptm.noise.releases): to observe
the releases, use ``dptm.noise.releases.recording()`` instead."""
import numpy as np

from dptm.noise.releases import LatticeGaussianRelease


def force_lattice_releases(monkeypatch, replace):
    """Every ``LatticeGaussianRelease`` still draws its noise and records its event, then
    returns ``replace(release, statistic, noisy)`` instead of ``noisy`` unless that is None:
    to hold a release's output fixed on two neighbouring data sets."""
    real = LatticeGaussianRelease.draw

    def draw(self, statistic, generator):
        noisy = real(self, statistic, generator)
        out = replace(self, statistic, noisy)
        return noisy if out is None else out
    monkeypatch.setattr(LatticeGaussianRelease, "draw", draw)


class HeldReleases:
    """A ``replace`` for :func:`force_lattice_releases`: the first run records every
    release's noisy output, each later run (after ``start()``) gets those values in order."""

    def __init__(self):
        self.values, self.next = [], None

    def __call__(self, release, statistic, noisy):
        if self.next is None:
            self.values.append(np.array(noisy, copy=True))
            return None
        self.next += 1
        return self.values[self.next - 1]

    def start(self):
        self.next = 0 if self.values else None
