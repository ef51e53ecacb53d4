"""Errors the user can act on. The CLI maps them to exit statuses (usage 2, input 1)."""

from __future__ import annotations


class GpmetisError(RuntimeError):
    """Base class: a message meant for the user, no traceback. A RuntimeError, as pymetis
    raises for what METIS refuses, so ``except RuntimeError`` keeps working after a switch."""

    exit_code = 1

    def __reduce__(self):
        # pickled as it is (a run on several GPUs hands its error back), whatever __init__ takes
        return _rebuilt, (type(self), self.args, dict(self.__dict__))


def _rebuilt(cls: type, args: tuple, state: dict) -> GpmetisError:
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class InputError(GpmetisError):
    """A malformed input file; names the file and, where known, the 1-based line."""

    def __init__(self, path: str, message: str, line: int | None = None) -> None:
        self.path = str(path)
        self.line = line
        self.reason = message
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")


class OptionError(GpmetisError):
    """An option value the engine cannot accept; names the option."""

    exit_code = 2

    def __init__(self, option: str, message: str) -> None:
        self.option = option
        super().__init__(f"{'NPARTS' if option == 'nparts' else f'option -{option}'}: {message}")


class PartitionError(GpmetisError):
    """The run cannot produce a valid partition (e.g. GPU out of memory without fallback)."""
