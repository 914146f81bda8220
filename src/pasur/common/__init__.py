"""What every layer shares: the one user-error type, output folders and files, the console, the
torch device, memory, the CFR family's update rules (:mod:`pasur.common.regret`, with the method
names in :mod:`pasur.common.cfr_methods`, free of torch), the experiment registry and Ray.

Front door (each name loaded when first named; see :mod:`pasur` for threads):
:class:`PasurInputError`, :func:`resolve_device`, :data:`METHODS`, :data:`PREDICTIVE`,
:func:`default_parameters`.

```pycon
>>> from pasur.common import PasurInputError, resolve_device, default_parameters
>>> resolve_device("cpu")
device(type='cpu')
>>> resolve_device("cuda:x")
Traceback (most recent call last):
...
pasur.common.errors.PasurInputError: unknown device 'cuda:x' (use cpu, cuda, cuda:N or auto)
>>> issubclass(PasurInputError, ValueError), default_parameters("dcfr")
(True, (1.5, 2.0))

```
"""

from pasur import lazy_exports

#: name -> ``"module:attribute"``
EXPORTS = {
    "PasurInputError": "pasur.common.errors:PasurInputError",
    "resolve_device": "pasur.common.device:resolve_device",
    "METHODS": "pasur.common.cfr_methods:METHODS",
    "PREDICTIVE": "pasur.common.cfr_methods:PREDICTIVE",
    "default_parameters": "pasur.common.cfr_methods:default_parameters",
}
__all__ = list(EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, EXPORTS)
