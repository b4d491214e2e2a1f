"""Write the real-vLLM tier's tiny model directory: a Qwen2 config, a byte-level BPE tokenizer trained
here, and our ChatML chat template. No weights: vLLM serves it with `--load-format dummy`.

Run with the vLLM venv's python (it has `tokenizers` and `transformers`):
    .venv-vllm/bin/python tests/realvllm/tiny_model.py OUT_DIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CONTROL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
# Single tokens the hermes tool parser and the qwen3 reasoning parser look up in the vocabulary. Like
# Qwen's own tokenizer they are not "special" for decoding: the server must not strip them from text.
MARKUP = ["<tool_call>", "</tool_call>", "<think>", "</think>"]
VOCAB_SIZE = 1024
MAX_POSITIONS = 8192


def corpus() -> list[str]:
    """Training text: the shapes the tier makes the model write (JSON calls, prose, code)."""
    template = (HERE / "chat_template.jinja").read_text(encoding="utf-8")
    lines = [
        '{"name": "read", "arguments": {"path": "README.md"}}',
        '{"name": "exec", "arguments": {"command": "ls"}}',
        '{"name": "write", "arguments": {"path": "notes.txt", "content": "hello"}}',
        'TOOL_CALL: {"name": "read", "args": {"path": "app.py"}}',
        "The answer is 42. Let me think about the question before I answer it.",
        "def add(a, b):\n    return a + b\n",
        "Use the read tool to read the file README.md. Call the tool now; do not answer in text.",
    ]
    return [template, *lines] * 20


def config(vocab_size: int, eos_id: int, bos_id: int) -> dict[str, object]:
    return {
        "architectures": ["Qwen2ForCausalLM"],
        "model_type": "qwen2",
        "hidden_size": 128,
        "intermediate_size": 256,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,  # head_dim 64: a size every CPU attention kernel takes
        "num_key_value_heads": 1,
        "head_dim": 64,
        "hidden_act": "silu",
        "max_position_embeddings": MAX_POSITIONS,
        "max_window_layers": 2,
        "rms_norm_eps": 1e-6,
        "rope_theta": 10000.0,
        "sliding_window": None,
        "use_sliding_window": False,
        "tie_word_embeddings": True,
        "torch_dtype": "bfloat16",
        "vocab_size": vocab_size,
        "bos_token_id": bos_id,
        "eos_token_id": eos_id,
    }


def write(out: Path) -> Path:
    """Write the model directory into `out` (created) and return it."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    out.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=CONTROL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus(), trainer)
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in MARKUP])
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=None,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        model_max_length=MAX_POSITIONS,
    )
    fast.chat_template = (HERE / "chat_template.jinja").read_text(encoding="utf-8")
    fast.save_pretrained(out)
    eos, pad = tok.token_to_id("<|im_end|>"), tok.token_to_id("<|endoftext|>")
    size = (tok.get_vocab_size() + 63) // 64 * 64  # the embedding is padded like real checkpoints
    (out / "config.json").write_text(json.dumps(config(size, eos, pad), indent=2), encoding="utf-8")
    generation = {"eos_token_id": [eos, pad], "pad_token_id": pad}
    (out / "generation_config.json").write_text(json.dumps(generation, indent=2), encoding="utf-8")
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    print(write(Path(sys.argv[1])))
