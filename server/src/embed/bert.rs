//! A BERT-family encoder (BERT, MiniLM, BGE, E5 …) on candle's CPU backend:
//! the forward pass of Hugging Face's `BertModel`, inference only.
//!
//! Token embeddings, then `num_hidden_layers` of self-attention and a
//! feed-forward block, each followed by a residual LayerNorm. Padding
//! positions are masked out of attention, so a sentence encodes the same
//! alone or in a batch padded to a longer one.

use candle_core::{CpuStorage, CustomOp1, D, DType, Device, Layout, Module, Shape, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, VarBuilder};
use serde::Deserialize;

/// The parts of `config.json` the forward pass needs.
#[derive(Debug, Clone, Deserialize)]
pub struct BertConfig {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    #[serde(default = "default_hidden_act")]
    pub hidden_act: String,
    pub max_position_embeddings: usize,
    #[serde(default = "default_type_vocab_size")]
    pub type_vocab_size: usize,
    #[serde(default = "default_layer_norm_eps")]
    pub layer_norm_eps: f64,
    #[serde(default)]
    pub model_type: Option<String>,
}

fn default_hidden_act() -> String {
    "gelu".into()
}
fn default_type_vocab_size() -> usize {
    2
}
fn default_layer_norm_eps() -> f64 {
    1e-12
}

/// The activation of the feed-forward block.
#[derive(Debug, Clone, Copy)]
enum Activation {
    /// Exact GELU (`gelu` in transformers).
    Gelu,
    /// The tanh approximation (`gelu_new`, `gelu_pytorch_tanh`).
    GeluTanh,
    Relu,
}

impl Activation {
    fn parse(name: &str) -> candle_core::Result<Activation> {
        match name {
            "gelu" => Ok(Activation::Gelu),
            "gelu_new" | "gelu_pytorch_tanh" | "gelu_fast" => Ok(Activation::GeluTanh),
            "relu" => Ok(Activation::Relu),
            other => Err(candle_core::Error::Msg(format!(
                "unsupported hidden_act {other:?} (gelu, gelu_new or relu)"
            ))),
        }
    }

    fn apply(self, xs: &Tensor) -> candle_core::Result<Tensor> {
        match self {
            Activation::Gelu if xs.dtype() == DType::F32 && xs.is_contiguous() => {
                xs.apply_op1_no_bwd(&FastGelu)
            }
            Activation::Gelu => xs.gelu_erf(),
            Activation::GeluTanh => xs.gelu(),
            Activation::Relu => xs.relu(),
        }
    }
}

/// Exact GELU, `x·Φ(x) = x·(1 + erf(x/√2))/2`, with erf by a rational
/// approximation accurate to float precision (Eigen's and XLA's): the
/// same values as candle's `gelu_erf`, whose libm erf took a fifth of the
/// encoder's time.
struct FastGelu;

impl CustomOp1 for FastGelu {
    fn name(&self) -> &'static str {
        "fast-gelu-erf"
    }

    fn cpu_fwd(
        &self,
        storage: &CpuStorage,
        layout: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let (CpuStorage::F32(values), Some((start, end))) = (storage, layout.contiguous_offsets())
        else {
            return Err(candle_core::Error::Msg(
                "fast-gelu-erf takes a contiguous f32 tensor".into(),
            ));
        };
        let out = engram_kernels::gelu_erf(&values[start..end]);
        Ok((CpuStorage::F32(out), layout.shape().clone()))
    }
}

struct Layer {
    /// Query, key and value projections fused into one matrix product.
    qkv: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
}

/// The encoder, weights loaded.
pub struct Bert {
    word_embeddings: Embedding,
    position_embeddings: Embedding,
    token_type_embeddings: Embedding,
    embeddings_norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    head_size: usize,
    activation: Activation,
    device: Device,
}

fn linear(inputs: usize, outputs: usize, vb: VarBuilder) -> candle_core::Result<Linear> {
    candle_nn::linear(inputs, outputs, vb)
}

fn layer_norm(size: usize, eps: f64, vb: VarBuilder) -> candle_core::Result<LayerNorm> {
    // Old checkpoints name LayerNorm's parameters gamma and beta.
    let (weight, bias) = if vb.contains_tensor("weight") {
        (vb.get(size, "weight")?, vb.get(size, "bias")?)
    } else {
        (vb.get(size, "gamma")?, vb.get(size, "beta")?)
    };
    Ok(LayerNorm::new(weight, bias, eps))
}

impl Bert {
    /// Loads the weights of `config` from `vb` (a checkpoint's tensors, with
    /// or without the `bert.` prefix of models saved with a task head).
    pub fn load(vb: VarBuilder, config: &BertConfig) -> candle_core::Result<Bert> {
        if !config
            .hidden_size
            .is_multiple_of(config.num_attention_heads)
        {
            return Err(candle_core::Error::Msg(format!(
                "hidden_size {} is not a multiple of num_attention_heads {}",
                config.hidden_size, config.num_attention_heads
            )));
        }
        let vb = if vb.contains_tensor("embeddings.word_embeddings.weight") {
            vb
        } else {
            vb.pp("bert")
        };
        let hidden = config.hidden_size;
        let embeddings = vb.pp("embeddings");
        let word_embeddings =
            candle_nn::embedding(config.vocab_size, hidden, embeddings.pp("word_embeddings"))?;
        let position_embeddings = candle_nn::embedding(
            config.max_position_embeddings,
            hidden,
            embeddings.pp("position_embeddings"),
        )?;
        let token_type_embeddings = candle_nn::embedding(
            config.type_vocab_size,
            hidden,
            embeddings.pp("token_type_embeddings"),
        )?;
        let embeddings_norm =
            layer_norm(hidden, config.layer_norm_eps, embeddings.pp("LayerNorm"))?;
        let layers = (0..config.num_hidden_layers)
            .map(|n| Layer::load(vb.pp(format!("encoder.layer.{n}")), config))
            .collect::<candle_core::Result<Vec<_>>>()?;
        Ok(Bert {
            word_embeddings,
            position_embeddings,
            token_type_embeddings,
            embeddings_norm,
            layers,
            heads: config.num_attention_heads,
            head_size: hidden / config.num_attention_heads,
            activation: Activation::parse(&config.hidden_act)?,
            device: vb.device().clone(),
        })
    }

    /// The last hidden states, `(batch, tokens, hidden)`, of `ids` (`(batch,
    /// tokens)`, u32) where `mask` (same shape, 1 = token, 0 = padding)
    /// marks the real tokens.
    pub fn forward(&self, ids: &Tensor, mask: &Tensor) -> candle_core::Result<Tensor> {
        let (_, tokens) = ids.dims2()?;
        let positions = Tensor::arange(0u32, tokens as u32, &self.device)?;
        let token_types = ids.zeros_like()?;
        let embedded = self
            .word_embeddings
            .forward(ids)?
            .add(&self.token_type_embeddings.forward(&token_types)?)?
            .broadcast_add(&self.position_embeddings.forward(&positions)?)?;
        let mut hidden = self.embeddings_norm.forward(&embedded)?;
        // 0 where attended, a large negative where padding: added to the
        // attention scores before the softmax, (batch, 1, 1, tokens).
        let bias = ((mask.to_dtype(DType::F32)? - 1.0)? * 1e4)?
            .unsqueeze(1)?
            .unsqueeze(1)?;
        for layer in &self.layers {
            hidden = layer.forward(&hidden, &bias, self)?;
        }
        Ok(hidden)
    }
}

impl Layer {
    fn load(vb: VarBuilder, config: &BertConfig) -> candle_core::Result<Layer> {
        let hidden = config.hidden_size;
        let attention = vb.pp("attention");
        let projections = ["query", "key", "value"]
            .map(|name| linear(hidden, hidden, attention.pp("self").pp(name)));
        let [query, key, value] = projections;
        let (query, key, value) = (query?, key?, value?);
        let weight = Tensor::cat(&[query.weight(), key.weight(), value.weight()], 0)?;
        let bias = match (query.bias(), key.bias(), value.bias()) {
            (Some(q), Some(k), Some(v)) => Some(Tensor::cat(&[q, k, v], 0)?),
            _ => None,
        };
        Ok(Layer {
            qkv: Linear::new(weight, bias),
            attention_out: linear(hidden, hidden, attention.pp("output.dense"))?,
            attention_norm: layer_norm(
                hidden,
                config.layer_norm_eps,
                attention.pp("output.LayerNorm"),
            )?,
            intermediate: linear(
                hidden,
                config.intermediate_size,
                vb.pp("intermediate.dense"),
            )?,
            output: linear(config.intermediate_size, hidden, vb.pp("output.dense"))?,
            output_norm: layer_norm(hidden, config.layer_norm_eps, vb.pp("output.LayerNorm"))?,
        })
    }

    fn forward(&self, xs: &Tensor, bias: &Tensor, bert: &Bert) -> candle_core::Result<Tensor> {
        let (batch, tokens, hidden) = xs.dims3()?;
        // (batch, tokens, 3, heads, head) → three of (batch, heads, tokens, head).
        let qkv = self
            .qkv
            .forward(xs)?
            .reshape((batch, tokens, 3, bert.heads, bert.head_size))?
            .permute((2, 0, 3, 1, 4))?;
        let query = qkv.get(0)?.contiguous()?;
        let key = qkv.get(1)?.contiguous()?;
        let value = qkv.get(2)?.contiguous()?;
        let scale = 1.0 / (bert.head_size as f64).sqrt();
        let scores = (query.matmul(&key.t()?)? * scale)?.broadcast_add(bias)?;
        let probabilities = candle_nn::ops::softmax_last_dim(&scores)?;
        let context = probabilities
            .matmul(&value)?
            .transpose(1, 2)?
            .reshape((batch, tokens, hidden))?;
        let attended = self
            .attention_norm
            .forward(&(self.attention_out.forward(&context)? + xs)?)?;
        let inner = bert
            .activation
            .apply(&self.intermediate.forward(&attended)?)?;
        self.output_norm
            .forward(&(self.output.forward(&inner)? + attended)?)
    }
}

/// Mean of the hidden states over the real tokens: `(batch, hidden)`.
pub fn mean_pool(hidden: &Tensor, mask: &Tensor) -> candle_core::Result<Tensor> {
    let mask = mask.to_dtype(DType::F32)?.unsqueeze(D::Minus1)?;
    let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
    let counts = mask.sum(1)?.clamp(1e-9, f64::MAX)?;
    summed.broadcast_div(&counts)
}

/// The hidden state of the first token (`[CLS]`): `(batch, hidden)`.
pub fn cls_pool(hidden: &Tensor) -> candle_core::Result<Tensor> {
    hidden.narrow(1, 0, 1)?.squeeze(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_gelu_matches_candles_exact_gelu() {
        let xs: Vec<f32> = (-12_000..12_000).map(|i| i as f32 / 1_000.0).collect();
        let tensor = Tensor::new(xs.as_slice(), &Device::Cpu).unwrap();
        let exact: Vec<f32> = tensor.gelu_erf().unwrap().to_vec1().unwrap();
        let fast: Vec<f32> = Activation::Gelu.apply(&tensor).unwrap().to_vec1().unwrap();
        for ((x, e), f) in xs.iter().zip(&exact).zip(&fast) {
            assert!(
                (e - f).abs() <= 1e-6 * (1.0 + x.abs()),
                "gelu({x}) = {e}, fast {f}"
            );
        }
    }
}
