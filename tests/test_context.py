"""The context of tuning constants (gpmetis/context.py): the presets are values of it, the
options give their preset's, and a value changed in it reaches the phase that reads it (cpu
engine)."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import fields, is_dataclass, replace
from pathlib import Path

import pytest
from conftest import load_fixture

from gpmetis import context, partition
from gpmetis.context import DEFAULT, STRONG, Context
from gpmetis.initial_partitioning import metis_trials
from gpmetis.options import PRESETS, Options
from gpmetis.partitioning.problem import DEFAULT_SEED

ROOT = Path(__file__).resolve().parents[1]


def differences(a, b, prefix: str = "") -> set[str]:
    """The dotted names of the fields where the dataclasses ``a`` and ``b`` differ."""
    out = set()
    for f in fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if is_dataclass(x):
            out |= differences(x, y, f"{prefix}{f.name}.")
        elif x != y:
            out.add(prefix + f.name)
    return out


def test_strong_differs_from_default_only_in_its_runs():
    # as context.STRONG and docs/options.md say: at least 4 runs, combined by V-cycles
    assert differences(DEFAULT, STRONG) == {"runs.min_runs", "runs.combine"}
    assert (DEFAULT.runs.min_runs, DEFAULT.runs.combine) == (1, False)
    assert (STRONG.runs.min_runs, STRONG.runs.combine) == (4, True)
    assert differences(DEFAULT, Context()) == set()


def test_the_options_give_their_presets_context():
    assert PRESETS == tuple(context.PRESETS) == ("default", "strong")
    assert Options().context is DEFAULT
    for name in PRESETS:
        assert Options(preset=name).context is context.PRESETS[name]
    assert Options(preset="strong").context is STRONG
    assert Options(preset="strong").runs == STRONG.runs.min_runs
    assert Options(preset="strong", ncuts=7).runs == 7 and Options(ncuts=3).runs == 3


def test_a_replaced_context_is_the_one_the_options_give(monkeypatch):
    changed = replace(DEFAULT, runs=replace(DEFAULT.runs, min_runs=3))
    monkeypatch.setitem(context.PRESETS, "default", changed)
    assert Options().context is changed and Options().runs == 3


def _trial_seeds(monkeypatch) -> list[int]:
    """The seeds of the METIS trials the runs submit from now on."""
    seeds = []
    real = metis_trials.run_jobs

    def recording(jobs, meanwhile, parallel):
        seeds.extend(args[6] for function, args in jobs if function is metis_trials.metis_trial)
        return real(jobs, meanwhile, parallel)

    monkeypatch.setattr(metis_trials, "run_jobs", recording)
    return seeds


@pytest.mark.parametrize("trials", [DEFAULT.initial.trials, 3])
def test_the_contexts_trial_count_is_the_number_of_metis_trials(monkeypatch, trials):
    initial = replace(DEFAULT.initial, trials=trials)
    monkeypatch.setitem(context.PRESETS, "default", replace(DEFAULT, initial=initial))
    seeds = _trial_seeds(monkeypatch)
    partition(load_fixture("4elt"), 2, engine="cpu")
    # the bisection of the coarsest graph and the direct candidate's k-way trials: seeds
    # DEFAULT_SEED, DEFAULT_SEED + 1, ... one per trial, each run of them
    assert seeds and len(seeds) % trials == 0
    assert set(seeds) == set(range(DEFAULT_SEED, DEFAULT_SEED + trials))


def test_the_contexts_coarsening_target_is_where_coarsening_stops(monkeypatch):
    graph = load_fixture("4elt")
    default = partition(graph, 8, engine="cpu").stats["levels"]
    coarsening = replace(DEFAULT.coarsening, min_vertices=4000)
    monkeypatch.setitem(context.PRESETS, "default", replace(DEFAULT, coarsening=coarsening))
    larger = partition(graph, 8, engine="cpu").stats["levels"]
    assert default[-1]["nvtxs"] <= DEFAULT.coarsening.target_slack * 1000
    assert 1100 < larger[-1]["nvtxs"] <= coarsening.target_slack * 4000
    assert len(larger) < len(default)


def test_the_context_module_imports_nothing_heavy():
    code = ("import sys; import gpmetis.context; "
            "print(sorted(m for m in sys.modules if m.startswith(('gpmetis', 'numpy'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout
    assert out.strip() == "['gpmetis', 'gpmetis.context']"
