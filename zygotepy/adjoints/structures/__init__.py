"""Rules for data structures: attribute and item reads, displays, unpacking and iteration.

A container's cotangent has the container's structure (a tuple gets a tuple, a dict a dict, `None` entries where no
gradient flows); an object's is a `StructGrad` of its fields. Array item reads scatter into a zero array, with `add.at`
so that repeated integer indices accumulate.

- dicts.py: dict displays, stores and methods, and the cotangents of keys read back out of a dict (`keys_read`,
  `key_cotangent`).
- common.py: `like` (item cotangents in the structure of their sequence), the `Items` iterator, and the helpers of
  generated code that carry no gradient.
- attributes.py: `getattr` (array attributes: `ATTRIBUTES`; properties, descriptors, `__getattr__`), `vars`, `super`,
  `functools.partial`.
- sequences.py: tuples, lists and sets: displays, unpacking, `append`, copies.
- iteration.py: `for` loops (`iterate`), `iter`, `next`, `enumerate`, `zip`.
- indexing.py: `x[index]` (`getitem`, `scatter_array`).
- sets.py: `|`, `&`, `-`, `^` of sets and the methods that update a set.

Importing this package registers the rules of all of them.
"""
from . import dicts, common, attributes, sequences, sets, iteration, indexing  # noqa: F401  (registers their rules)
