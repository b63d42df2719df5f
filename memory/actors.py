"""Who is acting, as the memory app names it: :class:`lib.identity.Actor` and its roles.

Identity is ground (``lib.identity``: lib and every app import it without climbing); this module
hands the same names on, so ``from memory.actors import Actor`` and ``from lib.identity import
Actor`` are one class.
"""

from lib.identity import STAFF as STAFF
from lib.identity import SYSTEM as SYSTEM
from lib.identity import Actor as Actor
