//! An in-process sentence encoder: a BERT-family model from a
//! sentence-transformers folder (or a plain Hugging Face one), run with
//! candle on the CPU.
//!
//! The folder holds `config.json`, `tokenizer.json` and `model.safetensors`;
//! the pooling comes from the sentence-transformers layout (`modules.json`
//! and the Pooling module's `config.json`: mean for all-MiniLM-L6-v2, CLS for
//! bge) and is mean without one. Inputs are capped at the model's maximum
//! (`max_seq_length` of `sentence_bert_config.json`, else the position
//! embeddings), padded only to the longest input of their batch, and every
//! vector is L2-normalised — which together reproduce sentence-transformers.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use serde::Deserialize;
use sha2::{Digest as _, Sha256};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use super::bert::{self, Bert, BertConfig};
use super::{ModelInfo, Pooling, normalise};

/// Inputs encoded together: sorted by length first, so a batch pads little.
const BATCH: usize = 32;

/// A loaded model.
pub struct LocalModel {
    bert: Bert,
    tokenizer: Tokenizer,
    pooling: Pooling,
    info: ModelInfo,
}

/// `sentence_bert_config.json`.
#[derive(Deserialize)]
struct SentenceBertConfig {
    max_seq_length: Option<usize>,
}

/// An entry of `modules.json`.
#[derive(Deserialize)]
struct Module {
    path: String,
    #[serde(rename = "type")]
    kind: String,
}

/// The Pooling module's `config.json`.
#[derive(Deserialize)]
struct PoolingConfig {
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
    #[serde(default)]
    pooling_mode_max_tokens: bool,
    #[serde(default)]
    pooling_mode_mean_sqrt_len_tokens: bool,
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> anyhow::Result<T> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

/// The pooling a sentence-transformers folder asks for; mean without one.
fn pooling_of(dir: &Path) -> anyhow::Result<Pooling> {
    let modules = dir.join("modules.json");
    if !modules.exists() {
        return Ok(Pooling::Mean);
    }
    let modules: Vec<Module> = read_json(&modules)?;
    let Some(module) = modules.iter().find(|m| m.kind.ends_with(".Pooling")) else {
        return Ok(Pooling::Mean);
    };
    let config: PoolingConfig = read_json(&dir.join(&module.path).join("config.json"))?;
    match (
        config.pooling_mode_cls_token,
        config.pooling_mode_mean_tokens,
        config.pooling_mode_max_tokens || config.pooling_mode_mean_sqrt_len_tokens,
    ) {
        (true, false, false) => Ok(Pooling::Cls),
        (false, true, false) => Ok(Pooling::Mean),
        _ => bail!(
            "{}: only CLS or mean pooling (one of them) is supported",
            module.path
        ),
    }
}

/// A short fingerprint of the files that decide the vectors.
fn fingerprint(files: &[PathBuf], pooling: Pooling, max_tokens: usize) -> anyhow::Result<String> {
    let mut hash = Sha256::new();
    for file in files {
        let mut reader =
            std::fs::File::open(file).with_context(|| format!("opening {}", file.display()))?;
        std::io::copy(&mut reader, &mut hash)
            .with_context(|| format!("reading {}", file.display()))?;
    }
    hash.update(format!("{pooling:?}/{max_tokens}"));
    Ok(hash.finalize()[..6]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

impl LocalModel {
    /// Loads the model in `dir`, or says what is missing or wrong.
    pub fn load(dir: &Path) -> anyhow::Result<LocalModel> {
        if !dir.is_dir() {
            bail!("{} is not a folder", dir.display());
        }
        let config_path = dir.join("config.json");
        let config: BertConfig = read_json(&config_path)?;
        if let Some(kind) = config.model_type.as_deref()
            && !matches!(kind, "bert" | "xlm-roberta" | "roberta")
        {
            bail!("model_type {kind:?}: only BERT-family encoders are supported");
        }
        let weights = dir.join("model.safetensors");
        if !weights.exists() {
            bail!(
                "{} is missing (a sentence-transformers folder holds config.json, tokenizer.json and model.safetensors)",
                weights.display()
            );
        }
        let pooling = pooling_of(dir)?;
        let sentence_bert = dir.join("sentence_bert_config.json");
        let max_seq_length = if sentence_bert.exists() {
            read_json::<SentenceBertConfig>(&sentence_bert)?.max_seq_length
        } else {
            None
        };
        let max_tokens = max_seq_length
            .unwrap_or(config.max_position_embeddings)
            .min(config.max_position_embeddings);

        let tokenizer_path = dir.join("tokenizer.json");
        let mut tokenizer = Tokenizer::from_file(&tokenizer_path)
            .map_err(|err| anyhow::anyhow!("loading {}: {err}", tokenizer_path.display()))?;
        // tokenizer.json often pads every input to a fixed length (128 for
        // all-MiniLM-L6-v2), which makes a short sentence cost a long one.
        let padding = PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..tokenizer.get_padding().cloned().unwrap_or_default()
        };
        tokenizer.with_padding(Some(padding));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens,
                ..Default::default()
            }))
            .map_err(|err| anyhow::anyhow!("setting truncation: {err}"))?;

        let device = Device::Cpu;
        let tensors = candle_core::safetensors::load(&weights, &device)
            .with_context(|| format!("reading {}", weights.display()))?;
        let vb = VarBuilder::from_tensors(tensors, DType::F32, &device);
        let bert = Bert::load(vb, &config).with_context(|| {
            format!(
                "loading the weights of {} as a {}-layer encoder",
                weights.display(),
                config.num_hidden_layers
            )
        })?;
        let fingerprint =
            fingerprint(&[config_path, tokenizer_path, weights], pooling, max_tokens)?;
        let info = ModelInfo {
            id: format!("local:{}", fingerprint),
            description: format!("{} ({})", dir.display(), fingerprint),
            dimensions: config.hidden_size,
            pooling: Some(pooling),
            max_tokens: Some(max_tokens),
        };
        Ok(LocalModel {
            bert,
            tokenizer,
            pooling,
            info,
        })
    }

    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    /// L2-normalised vectors of `texts`, in order. Blocks: the matrix
    /// products run on candle's thread pool (every core).
    pub fn embed(&self, texts: &[String]) -> anyhow::Result<Vec<Vec<f32>>> {
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut vectors = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(BATCH) {
            let inputs: Vec<&str> = chunk.iter().map(|&i| texts[i].as_str()).collect();
            for (&i, vector) in chunk.iter().zip(self.embed_batch(inputs)?) {
                vectors[i] = vector;
            }
        }
        Ok(vectors)
    }

    fn embed_batch(&self, inputs: Vec<&str>) -> anyhow::Result<Vec<Vec<f32>>> {
        let encodings = self
            .tokenizer
            .encode_batch(inputs, true)
            .map_err(|err| anyhow::anyhow!("tokenizing: {err}"))?;
        let batch = encodings.len();
        let tokens = encodings.first().map_or(0, |e| e.len());
        let mut ids = Vec::with_capacity(batch * tokens);
        let mut mask = Vec::with_capacity(batch * tokens);
        for encoding in &encodings {
            ids.extend_from_slice(encoding.get_ids());
            mask.extend_from_slice(encoding.get_attention_mask());
        }
        let device = Device::Cpu;
        let ids = Tensor::from_vec(ids, (batch, tokens), &device)?;
        let mask = Tensor::from_vec(mask, (batch, tokens), &device)?;
        let hidden = self.bert.forward(&ids, &mask)?;
        let pooled = match self.pooling {
            Pooling::Mean => bert::mean_pool(&hidden, &mask)?,
            Pooling::Cls => bert::cls_pool(&hidden)?,
        };
        let mut vectors: Vec<Vec<f32>> = pooled.to_vec2()?;
        for vector in &mut vectors {
            normalise(vector);
        }
        Ok(vectors)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::embed::dot;

    /// all-MiniLM-L6-v2, fetched by `scripts/fetch-model.sh` (which the
    /// test command runs), or the folder in `ENGRAM_TEST_MODEL`.
    pub(crate) fn model_dir() -> PathBuf {
        let dir = std::env::var_os("ENGRAM_TEST_MODEL").map_or_else(
            || Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/models/all-MiniLM-L6-v2"),
            PathBuf::from,
        );
        assert!(
            dir.join("model.safetensors").exists(),
            "no test model in {}: run scripts/fetch-model.sh",
            dir.display()
        );
        dir
    }

    fn model() -> &'static LocalModel {
        static MODEL: std::sync::OnceLock<LocalModel> = std::sync::OnceLock::new();
        MODEL.get_or_init(|| LocalModel::load(&model_dir()).expect("the test model loads"))
    }

    fn embed(texts: &[&str]) -> Vec<Vec<f32>> {
        let texts: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
        model().embed(&texts).unwrap()
    }

    #[test]
    fn it_reproduces_sentence_transformers() {
        let v = embed(&["A man is eating food.", "A man is eating a piece of bread."]);
        let cosine = dot(&v[0], &v[1]);
        assert!((cosine - 0.7553).abs() < 0.001, "cosine {cosine}");
        let info = model().info();
        assert_eq!(info.dimensions, 384);
        assert_eq!(info.pooling, Some(Pooling::Mean));
        assert_eq!(info.max_tokens, Some(256));
        assert_eq!(v[0].len(), 384);
    }

    #[test]
    fn a_text_encodes_the_same_alone_or_padded_in_a_batch() {
        let short = "Alice prefers concise answers";
        let long = "The deploy of the checkout service failed after the orders \
                    migration locked the payments table for twenty minutes";
        let together = embed(&[long, short, ""]);
        let alone = embed(&[short]);
        assert_eq!(together.len(), 3);
        for (a, b) in together[1].iter().zip(&alone[0]) {
            assert!((a - b).abs() < 1e-4, "{a} vs {b}");
        }
        for vector in &together {
            let norm = dot(vector, vector).sqrt();
            assert!((norm - 1.0).abs() < 1e-4, "norm {norm}");
        }
    }

    #[test]
    fn inputs_past_the_cap_are_truncated() {
        let long = "memory ".repeat(2_000);
        let capped = "memory ".repeat(400);
        let v = embed(&[&long, &capped]);
        // Both are cut to the first 256 tokens, so they are the same text.
        assert!(dot(&v[0], &v[1]) > 0.9999);
    }

    /// What one short query costs, as a search embeds it: `cargo test
    /// --profile profiling -p engram-server --lib embed::local::tests::query_cost
    /// -- --ignored --nocapture` (in a debug build the model is unoptimised).
    #[test]
    #[ignore = "prints what embedding one query costs"]
    fn query_cost() {
        let queries: Vec<String> = (0..300)
            .map(|i| format!("where did project {i} deploy the billing service"))
            .collect();
        model().embed(&queries[..1]).unwrap();
        let mut times: Vec<f64> = queries
            .iter()
            .map(|q| {
                let started = std::time::Instant::now();
                model().embed(std::slice::from_ref(q)).unwrap();
                started.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        times.sort_by(f64::total_cmp);
        println!(
            "one query of 8 words: p50 {:.2} ms, p90 {:.2} ms over {}",
            times[times.len() / 2],
            times[times.len() * 9 / 10],
            times.len()
        );
        let memories: Vec<String> = (0..1024)
            .map(|i| {
                format!(
                    "memory {i}: the billing service of project {i} deploys from the release \
                     branch every Tuesday after the payments team signs off on the migration"
                )
            })
            .collect();
        let started = std::time::Instant::now();
        model().embed(&memories).unwrap();
        println!(
            "1,024 memories of 25 words: {:.0} memories/s",
            memories.len() as f64 / started.elapsed().as_secs_f64()
        );
    }

    #[test]
    fn a_folder_without_a_model_is_refused_with_a_reason() {
        let empty = tempfile::tempdir().unwrap();
        let err = LocalModel::load(empty.path()).err().unwrap();
        assert!(format!("{err:#}").contains("config.json"), "{err:#}");
        let err = LocalModel::load(&empty.path().join("missing"))
            .err()
            .unwrap();
        assert!(format!("{err:#}").contains("is not a folder"), "{err:#}");
    }
}
