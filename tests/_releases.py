"""Helpers of the tests that steer what a release returns (dptm.noise.releases): to observe
the releases, use ``dptm.noise.releases.recording()`` instead."""
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
