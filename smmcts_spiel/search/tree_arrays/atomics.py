"""Atomic operations on the tree's arrays (tree parallelism: several threads grow one tree),
as LLVM intrinsics, and the compile options of every helper inlined into the engines'
loops (:data:`inlined`, :data:`array_returning`)."""

from __future__ import annotations

import numba
import numba.extending

#: A helper of the engines' loops: compiled once by numba, and inlined into every caller by
#: LLVM (``forceinline``). numba's own inlining (``inline="always"``) re-types the helper in
#: every caller: with it the kernel engine's first compile took minutes.
inlined = numba.njit(forceinline=True, error_model="numpy")
#: A helper that returns one of its array arguments: inlined by numba, so that the returned
#: array is reference-counted as its caller counts them (the kernel engine runs without
#: numba's reference counting, the information-set searches with it); a helper compiled
#: once would count them as the first engine that compiled it.
array_returning = numba.njit(inline="always", error_model="numpy")




def _element(context, builder, signature, args):
    array = context.make_array(signature.args[0])(context, builder, args[0])
    return builder.gep(array.data, [args[1]])


@numba.extending.intrinsic
def _atomic_add(typingctx, array, index, value):
    """``array[index] += value`` as one atomic step; returns the value before."""
    def codegen(context, builder, signature, args):
        return builder.atomic_rmw("add", _element(context, builder, signature, args), args[2],
                                  "seq_cst")
    return numba.types.int64(array, numba.types.intp, numba.types.int64), codegen


@numba.extending.intrinsic
def _compare_and_swap(typingctx, array, index, expected, value):
    """``array[index] = value`` if it holds ``expected``, as one atomic step; whether it did."""
    def codegen(context, builder, signature, args):
        pair = builder.cmpxchg(_element(context, builder, signature, args), args[2], args[3],
                               "seq_cst", "seq_cst")
        return builder.extract_value(pair, 1)
    return numba.types.boolean(array, numba.types.intp, numba.types.int64,
                               numba.types.int64), codegen


@numba.extending.intrinsic
def _acquire_load(typingctx, array, index):
    """``array[index]`` read as an atomic load: read again on every call (never kept in a
    register across a loop), and what the writer stored before its release store is seen."""
    def codegen(context, builder, signature, args):
        return builder.load_atomic(_element(context, builder, signature, args), "acquire", 8)
    return numba.types.int64(array, numba.types.intp), codegen


@numba.extending.intrinsic
def _release_store(typingctx, array, index, value):
    """``array[index] = value`` after every store before it (a reader's acquire load that
    sees the value sees them too): how a node or child is published to other threads."""
    def codegen(context, builder, signature, args):
        builder.store_atomic(args[2], _element(context, builder, signature, args), "release", 8)
        return context.get_dummy_value()
    return numba.types.none(array, numba.types.intp, numba.types.int64), codegen


@numba.extending.intrinsic
def _atomic_float_add(typingctx, array, index, value):
    """``array[index] += value`` (float64) as one atomic step."""
    def codegen(context, builder, signature, args):
        builder.atomic_rmw("fadd", _element(context, builder, signature, args), args[2],
                           "monotonic")
        return context.get_dummy_value()
    return numba.types.none(array, numba.types.intp, numba.types.float64), codegen


# (mypy reads an intrinsic's typing context as an argument: hence these wrappers.)
@inlined
def atomic_add(array, index, value):
    """``array[index] += value`` as one atomic step; returns the value before."""
    return _atomic_add(array, index, value)  # type: ignore[call-arg]


@inlined
def compare_and_swap(array, index, expected, value):
    """``array[index] = value`` if it holds ``expected``, as one atomic step; whether it did."""
    return _compare_and_swap(array, index, expected, value)  # type: ignore[call-arg]


@inlined
def acquire_load(array, index):
    """``array[index]`` as an acquire load (see :func:`_acquire_load`)."""
    return _acquire_load(array, index)  # type: ignore[call-arg]


@inlined
def release_store(array, index, value):
    """``array[index] = value`` as a release store (see :func:`_release_store`)."""
    _release_store(array, index, value)  # type: ignore[call-arg]


@inlined
def add(array, index, value, atomic):
    """``array[index] += value``, atomically if ``atomic`` (threads share the tree and this
    entry: ``config[SHARED]``): a thread descheduled between reading and writing a plain sum
    would otherwise write back a value milliseconds old, erasing every update made
    meanwhile (seen: a node's visits short by thousands on the loaded machine)."""
    if atomic:
        _atomic_float_add(array, index, value)  # type: ignore[call-arg]
    else:
        array[index] += value


@inlined
def take(array, index, n, shared):
    """``array[index] += n``, returning the value before: atomic if ``shared`` (another
    thread may take from the same counter)."""
    if shared:
        return atomic_add(array, index, n)
    old = array[index]
    array[index] = old + n
    return old
