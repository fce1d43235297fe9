"""The knowledge base: local hybrid retrieval over the user's documents (docs/architecture.md section 7).

Documents are cut into line-bounded chunks, kept in one SQLite file (`knowledge.sqlite`) with an
FTS5 index and float32 vectors, and searched by a keyword pass and a vector pass fused with
Reciprocal Rank Fusion. Heavy imports (numpy, the embedding model) stay inside functions.
"""

from __future__ import annotations

from arreio.memory.knowledge.backend import ChunkRecord, DocumentRecord, Hit, KnowledgeBackend
from arreio.memory.knowledge.chunking import Chunk, ChunkConfig, chunk_text
from arreio.memory.knowledge.fusion import FusionConfig, dedupe, fuse, rrf
from arreio.memory.knowledge.index import KnowledgeBase, open_knowledge_base

__all__ = [
    "Chunk",
    "ChunkConfig",
    "ChunkRecord",
    "DocumentRecord",
    "FusionConfig",
    "Hit",
    "KnowledgeBackend",
    "KnowledgeBase",
    "chunk_text",
    "dedupe",
    "fuse",
    "open_knowledge_base",
    "rrf",
]
