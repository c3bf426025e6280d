"""Stand-in for the `fastcache` C extension (not in Debian): the same memoisation,
from functools. Caching never changes a result, only how often it is recomputed."""
import functools


def clru_cache(maxsize=128, typed=False, state=None, unhashable='error'):
    return functools.lru_cache(maxsize=maxsize, typed=typed)


lru_cache = clru_cache
