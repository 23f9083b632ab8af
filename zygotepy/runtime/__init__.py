"""The floor the compiler's generated code and the rules stand on at run time. Today it holds the per-call context;
the J dispatch, accumulation and the journal of updates in place still live in `ast_adjoint/` (dispatch, runtime,
accumulate, mutate) and move here as the consolidation goes on (docs/architecture.md)."""
