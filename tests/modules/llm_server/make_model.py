#!/usr/bin/env python3
"""Writes a tiny llama-architecture GGUF model with random weights from a fixed seed.

The answers it gives mean nothing, but running it is real inference (llama.cpp evaluates every
layer and samples every token), which is what the LLM module's tests need: real HTTP, real token
usage, real latency, real grammar-constrained JSON. Usage: make_model.py GGUF_PY_DIR OUT.gguf
GGUF_PY_DIR is the gguf-py folder of the llama.cpp sources node-llama-cpp bundles.
"""
import sys

if len(sys.argv) != 3:
    sys.exit("usage: make_model.py GGUF_PY_DIR OUT.gguf")
sys.path.insert(0, sys.argv[1])

import numpy as np  # noqa: E402
import gguf  # noqa: E402

SEED = 20261201
N_EMBD, N_LAYER, N_HEAD, N_FF, N_CTX = 64, 2, 4, 128, 2048

# SentencePiece-style vocabulary: control tokens, the 256 byte tokens (any text can be spelt,
# so a JSON grammar can always be satisfied), then a few word pieces.
tokens = [b"<unk>", b"<s>", b"</s>"]
types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
for b in range(256):
    tokens.append(("<0x%02X>" % b).encode())
    types.append(gguf.TokenType.BYTE)
pieces = ["\u2581" + w for w in "the a is yes no true false answer result value text ok".split()]
pieces += [c for c in "abcdefghijklmnopqrstuvwxyz0123456789{}[]:,\"."]
for p in pieces:
    tokens.append(p.encode())
    types.append(gguf.TokenType.NORMAL)
scores = [0.0] * 259 + [-float(i) for i in range(len(pieces))]
n_vocab = len(tokens)

rng = np.random.default_rng(SEED)


def weight(*shape):
    return (rng.standard_normal(shape) * 0.2).astype(np.float32)


w = gguf.GGUFWriter(sys.argv[2], "llama")
w.add_name("genvm-test-random-llama")
w.add_context_length(N_CTX)
w.add_embedding_length(N_EMBD)
w.add_block_count(N_LAYER)
w.add_feed_forward_length(N_FF)
w.add_head_count(N_HEAD)
w.add_head_count_kv(N_HEAD)
w.add_rope_dimension_count(N_EMBD // N_HEAD)
w.add_layer_norm_rms_eps(1e-5)
w.add_file_type(gguf.LlamaFileType.ALL_F32)
w.add_tokenizer_model("llama")
w.add_token_list(tokens)
w.add_token_scores(scores)
w.add_token_types(types)
w.add_bos_token_id(1)
w.add_eos_token_id(2)
w.add_unk_token_id(0)
w.add_add_bos_token(True)

# numpy shapes are ggml's dimensions reversed: a (rows, cols) array is ne = [cols, rows].
w.add_tensor("token_embd.weight", weight(n_vocab, N_EMBD))
for i in range(N_LAYER):
    w.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
        w.add_tensor(f"blk.{i}.{name}.weight", weight(N_EMBD, N_EMBD))
    w.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    w.add_tensor(f"blk.{i}.ffn_gate.weight", weight(N_FF, N_EMBD))
    w.add_tensor(f"blk.{i}.ffn_up.weight", weight(N_FF, N_EMBD))
    w.add_tensor(f"blk.{i}.ffn_down.weight", weight(N_EMBD, N_FF))
w.add_tensor("output_norm.weight", np.ones(N_EMBD, dtype=np.float32))
w.add_tensor("output.weight", weight(n_vocab, N_EMBD))

w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
