/**
 * The Chinese of the texts the display layer shows (see ../locale.ts): chart, axis and legend
 * titles and table headers that reach the Chinese notebooks in English, because the library
 * wrote them (`runNormExperiment`'s figures) or because they are one-word identifiers that
 * `npm run notebooks:sync` never translates (`{ model, expected }`, `xTitle: 'microStep'`).
 * A text a zh notebook writes in Chinese already (through notebooks/zh/translations.json) needs
 * no entry.
 *
 * Rules of an entry, as in translations.json: the key is the English text; `${}` in a key
 * stands for any text, filled into the `${}` of the translation in order (and translated too
 * when it has an entry itself); an entry that maps a text to itself keeps it as it is (a model
 * or unit name). Terms follow notebooks/glossary.json, which
 * test/scripts/translation/glossary.test.ts checks, and the zh edition's run fails on a text
 * missing here.
 */
export const ZH_TEXTS: Readonly<Record<string, string>> = {
  // The glossary's identifiers, as axis titles and table headers.
  microStep: '微步',
  'micro-step': '微步',
  microBatchSize: '微批次大小',
  'microBatchSize ${}': '微批次大小 ${}',
  accumulationSteps: '累积步数',
  updateStep: '更新步',
  logicalBatchSize: '逻辑批次大小',
  maxRelativeDifference: '最大相对差距',
  averaging: '平均方式',

  // Normalizations, by their NormalizationKind, as legends and table cells.
  batch: '批归一化',
  'batch-renorm': '批再归一化',
  group: '组归一化',
  layer: '层归一化',
  'frozen-batch': '冻结的批归一化',
  none: '无归一化',
  BatchNorm: 'BatchNorm',
  GroupNorm: 'GroupNorm',

  // Names kept as they are.
  CNN: 'CNN',
  MLP: 'MLP',
  mlp: 'MLP',
  cnn: 'CNN',
  'GFLOP/s': 'GFLOP/s',
  'TensorFlow.js': 'TensorFlow.js',
  'WebAssembly SIMD': 'WebAssembly SIMD',
  'Wu & He BN': 'Wu & He BN',
  'Wu & He GN': 'Wu & He GN',

  // Table headers and cells of the chapters.
  component: '组件',
  value: '值',
  backend: '后端',
  yes: '是',
  no: '否',
  true: '是',
  false: '否',
  // GradientAccumulator's StepResult.skipped: the whole window was dropped.
  window: '整个窗口',
  'large-update': '更新过大',
  'micro-batch': '微批次',
  rule: '规则',
  logged: '记录的损失',
  quantity: '量',
  library: '本库',
  once: '1 次',
  gradient: '梯度',
  applied: '已更新',
  skipped: '已跳过',
  normalization: '归一化',
  equivalent: '等价',
  roundingNoise: '舍入噪声',
  suspects: '可疑的层',
  model: '模型',
  valuesPerStatistic: '每个统计量的取值个数',
  meanShift: '均值偏移',
  expected: '预期',
  measured: '实测',
  recorded: '记录值',
  trainer: '训练方式',
  speedup: '加速比',
  'peak(4 x 16) / peak(1 x 64)': '峰值(4 x 16) / 峰值(1 x 64)',

  // The site's live blocks (scripts/site/live/run.ts), drawn in the reader's browser.
  'How far each weight moved: 4 x 16 against one step of 64': '每个权重移动了多少：累积 4 x 16 与一步 64 个样本',
  'change in the weight': '权重的变化',
  weight: '权重',
  'one step of 64': '一步 64 个样本',
  'accumulated 4 x 16': '累积 4 x 16',
  'SimpleNet in your browser: loss per micro-step and per update': '在你的浏览器中运行的 SimpleNet：每个微步和每次更新的损失',
  'mean squared error': '均方误差',
  'micro-batch loss': '微批次损失',
  'window loss (logical batch of 64)': '窗口损失（64 样本的逻辑批次）',

  // runNormExperiment's figures (src/tutorial/experiments/normExperiment/figures.ts).
  'Test error by micro-batch size (logical batch ${}, ${} on MNIST, ${} seeds; bars ±${} standard errors)': '各微批次大小下的测试错误率（逻辑批次 ${}，MNIST 上的 ${}，${} 个随机种子；误差棒为 ±${} 个标准误差）',
  'Test error by micro-batch size (logical batch ${}, ${} on MNIST, ${} seed; bars ±${} standard errors)': '各微批次大小下的测试错误率（逻辑批次 ${}，MNIST 上的 ${}，${} 个随机种子；误差棒为 ±${} 个标准误差）',
  'test error (%)': '测试错误率（%）',
  'Reference: Wu & He 2018, ResNet-50 on ImageNet': '参照：Wu & He 2018，ImageNet 上的 ResNet-50',
  'images per GPU (microBatchSize)': '每块 GPU 的图片数（微批次大小）',
  'top-1 error (%)': 'top-1 错误率（%）',
  'Moving vs recomputed statistics at test time': '测试时用滑动统计量与用重新计算的统计量',
  '${} (moving statistics)': '${}（滑动统计量）',
  '${} (recomputed statistics)': '${}（重新计算的统计量）',
  "Distance of micro-batch statistics from the population's (${}, after training)": '微批次的统计量与总体统计量的距离（${}，训练之后）',
  'distance (population std devs)': '距离（以总体标准差为单位）',
  'layer ${} (${} values per sample)': '第 ${} 层（每个样本 ${} 个值）',
  'layer ${} (${} value per sample)': '第 ${} 层（每个样本 ${} 个值）',
  '${}: |mu_B - mu| / sigma': '${}：|μ_B − μ| / σ',
  '${}: |sigma_B / sigma - 1|': '${}：|σ_B / σ − 1|',
  'Training loss, ${} normalization (mean over seeds, smoothed over 5 updates)': '训练损失，${}（各随机种子的平均，按 5 次更新平滑）',
  'training loss (cross-entropy)': '训练损失（交叉熵）',
};
