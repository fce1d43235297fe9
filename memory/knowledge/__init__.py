"""The knowledge base: local hybrid retrieval over the user's documents (docs/architecture.md section 7).

Documents are cut into line-bounded chunks, kept in one SQLite file (`knowledge.sqlite`) with an
FTS5 index and float32 vectors, and searched by a keyword pass and a vector pass fused with
Reciprocal Rank Fusion. Heavy imports (numpy, the embedding model) stay inside functions, and this
package imports none of its modules: a run that never searches loads only what its feature needs.
"""
