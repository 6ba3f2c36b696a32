/**
 * The site's own words (the page chrome, not the notebooks' text), one column per edition. The
 * exporter uses them when it writes a page; the browser scripts (site.js, search.js) read the
 * `browser` part from a JSON script element the layout puts in every page, so that this table
 * is the only place a UI string lives.
 */
import { escapeHtml, SafeHtml, trusted } from './html';
import type { PageLang } from './model';

/** What site.js and search.js need; `{n}`, `{q}` and `{cell}` are filled in by the scripts. */
export interface BrowserStrings {
  copy: string;
  copied: string;
  copyFailed: string;
  /** The copy button's label; `{n}` is the cell's number. */
  copyLabel: string;
  cueBoth: string;
  cueSideways: string;
  cueDown: string;
  noIndex: string;
  noMatch: string;
  oneMatch: string;
  matches: string;
  matchesTruncated: string;
  inThe: { prose: string; code: string; output: string };
  ofCell: string;
}

/**
 * The words of a "run it in your browser" block (scripts/site/live/): the exporter writes the
 * heading, the sentence and the button into the page, and hands the rest to the block's script
 * (loader.ts) in a data attribute.
 */
export interface LiveStrings {
  heading: string;
  /** What chapter 3's block runs; `{api}` is the class's name, as code. */
  accumulation: string;
  /** What chapter 4's block runs. */
  trainingLoop: string;
  /** After the block's sentence: what pressing the button costs. */
  download: string;
  button: string;
  loading: string;
  running: string;
  /** The result's first line; `{name}`: the backend's name. */
  backend: string;
  /** `{why}`: the error's message. */
  failed: string;
  /** The names of the numbers a run reports (scripts/site/live/run.ts), by their key. */
  numbers: Record<string, string>;
}

/** Every UI string of one edition. */
export interface UiStrings {
  /** The language's own name, on the link that leads to it. */
  languageName: string;
  skipLink: string;
  searchLabel: string;
  searchPlaceholder: string;
  themeToggle: string;
  onThisPage: string;
  contents: string;
  chapters: string;
  searchTitle: string;
  searchFormLabel: string;
  searchButton: string;
  searchNoScript: string;
  /** The index's lead sentence after the description. */
  indexLead: string;
  /** The heading over the other edition's list on the index. */
  otherEdition: string;
  download: string;
  source: string;
  /** `{n}` notebooks, executed in `{s}` seconds. */
  indexFooter: string;
  notExecuted: string;
  /** `{when}`, `{cells}`, `{time}` are the optional parts below, each empty when unknown. */
  executed: string;
  executedOn: string;
  executedCells: string;
  executedTime: string;
  failedBadge: string;
  /** `{where}` is the failing cell's link, `{kind}` what failed. */
  failureBanner: string;
  failedCell: string;
  aCell: string;
  linkToSection: string;
  outputOfCell: string;
  codeOfCell: string;
  table: string;
  equation: string;
  /** A fenced code block in prose (the docs pages have many). */
  codeBlock: string;
  /** The summary of a `hide-input` cell's collapsed code. */
  showCode: string;
  /** The summary of a `hide-output` cell's collapsed outputs. */
  showOutput: string;
  /** The label of the footer's previous/next links (the sidebar is "Chapters"). */
  pagerLabel: string;
  /** The phone header's button that opens the chapter menu (its accessible name is `chapters`). */
  menu: string;
  /** An HTML output that is not inert; `{why}` names what it uses. */
  htmlSanitized: string;
  /** `{types}`: the output's MIME types. */
  unsupportedOutput: string;
  /** A chapter's description when it has no subtitle. */
  chapterDescription: string;
  siteDescription: string;
  /** After the site's name in the index's `<title>`. */
  indexTitle: string;
  searchDescription: string;
  /** The index's heading over how to get the code. */
  getCode: string;
  /** Before the install command: `{name}` the package, `{peer}` and `{range}` its tfjs peer, as code. */
  install: string;
  /** When package.json names a repository; `{repo}` is its link. */
  repository: string;
  /** When it names none: where else the code on the pages can be had. */
  noRepository: string;
  /** The index's heading over the docs/ pages. */
  reference: string;
  /** Under it; `{docs}` is the folder's name, as code. */
  referenceLead: string;
  /** Over a docs page written in another language than the edition's; empty in English. */
  docsInEnglish: string;
  /** A docs page's description; `{title}`, `{site}`. */
  docDescription: string;
  browser: BrowserStrings;
  live: LiveStrings;
}

const EN: UiStrings = {
  languageName: 'English',
  skipLink: 'Skip to content',
  searchLabel: 'Search the tutorial',
  searchPlaceholder: 'Search',
  themeToggle: 'Dark',
  onThisPage: 'On this page',
  contents: 'Contents',
  chapters: 'Chapters',
  searchTitle: 'Search',
  searchFormLabel: "Search the chapters' text, code and outputs",
  searchButton: 'Search',
  searchNoScript: 'Search needs JavaScript; the {contents} list every chapter and section.',
  indexLead: 'Every page below was produced by running its notebook; the charts are interactive.',
  otherEdition: 'The Chinese edition',
  download: 'Download the executed notebook (.ipynb)',
  source: 'Source',
  indexFooter: '{n} notebooks, executed in {s} s.',
  notExecuted: 'Not executed by {cmd}.',
  executed: 'Executed by {cmd}{when}{cells}{time}.',
  executedOn: ' on {date}',
  executedCells: ': {done} of {total} code cells',
  executedTime: ' in {s} s',
  failedBadge: 'failed',
  failureBanner: 'This notebook did not run to the end: {where} failed ({kind}). Outputs below stop there.',
  failedCell: 'cell {n}',
  aCell: 'a cell',
  linkToSection: 'Link to this section: {title}',
  outputOfCell: 'Output {n} of cell {cell}',
  codeOfCell: 'Code of cell {cell}',
  table: 'Table {n}',
  codeBlock: 'Code block {n}',
  equation: 'Equation {n}',
  showCode: 'Show code',
  showOutput: 'Show output',
  pagerLabel: 'Previous and next chapter',
  menu: 'Chapters',
  htmlSanitized: 'Parts of this HTML output were removed: the site runs no script from a notebook, loads nothing from elsewhere, and lets no output cover the page.',
  unsupportedOutput: '(an output of type {types} that a static page cannot show)',
  chapterDescription: '{title}: a chapter of the {site} tutorial.',
  siteDescription: 'Gradient accumulation and small-batch normalization for TensorFlow.js, taught by executable TypeScript notebooks.',
  indexTitle: 'the notebooks',
  searchDescription: "Search the {site} tutorial's prose, code and outputs.",
  getCode: 'Get the code',
  install: 'The library is the npm package {name}. Install it together with TensorFlow.js, its peer dependency ({peer} {range}), whose version your project chooses:',
  repository: 'The source, the notebooks and the reference pages are in the repository {repo}.',
  noRepository: "Each chapter's page links its notebook for download, and the reference pages below describe the library, how it is built and how it is tested.",
  reference: 'Reference',
  referenceLead: "The project's documentation, from its {docs} folder.",
  docsInEnglish: '',
  docDescription: '{title}: reference documentation of {site}.',
  browser: {
    copy: 'Copy',
    copied: 'Copied',
    copyFailed: 'Copy failed',
    copyLabel: 'Copy the code of cell {n}',
    cueBoth: 'scrolls both ways ↔ ↕',
    cueSideways: 'scroll sideways for more →',
    cueDown: 'scroll down for more ↓',
    noIndex: 'The search index did not load.',
    noMatch: 'No section mentions “{q}”.',
    oneMatch: '1 match for “{q}”.',
    matches: '{n} matches for “{q}”.',
    matchesTruncated: '{n} matches for “{q}”; the best {max} are shown.',
    inThe: { prose: 'in the text', code: 'in the code', output: 'in the output' },
    ofCell: ' of cell {n}',
  },
  live: {
    heading: 'Run it in your browser',
    accumulation: 'Four micro-batches of 16 through {api} against one SGD step on all 64, as above, on the best backend your browser offers (WebGL, else cpu).',
    trainingLoop: "The article's training loop: 20 micro-batches of 16, an update after every 4th, on the best backend your browser offers (WebGL, else cpu).",
    download: 'Nothing is downloaded until you press the button (about 1 MB: TensorFlow.js and the library).',
    button: 'Run in this browser',
    loading: 'Loading TensorFlow.js and tfjs-accumulate…',
    running: 'Running…',
    backend: 'Backend: {name}',
    failed: 'The example could not run here: {why}',
    numbers: {
      maxRelativeDifference: 'largest relative difference',
      updateStep: 'updates applied',
      updates: 'updates applied',
      firstWindowLoss: 'loss of the first window',
      lastWindowLoss: 'loss of the last window',
      ms: 'time',
    },
  },
};

const ZH: UiStrings = {
  languageName: '中文',
  skipLink: '跳到正文',
  searchLabel: '搜索教程',
  searchPlaceholder: '搜索',
  themeToggle: '深色',
  onThisPage: '本页内容',
  contents: '目录',
  chapters: '章节',
  searchTitle: '搜索',
  searchFormLabel: '搜索各章的正文、代码和输出',
  searchButton: '搜索',
  searchNoScript: '搜索需要 JavaScript；{contents}列出了所有章节。',
  indexLead: '下面每一页都由实际运行对应的 notebook 生成；图表可以交互。',
  otherEdition: '英文版（English）',
  download: '下载运行后的 notebook（.ipynb）',
  source: '源文件',
  indexFooter: '{n} 个 notebook，共运行 {s} 秒。',
  notExecuted: '未经 {cmd} 运行。',
  executed: '由 {cmd} 运行{when}{cells}{time}。',
  executedOn: '于 {date}',
  executedCells: '，{total} 个代码单元运行了 {done} 个',
  executedTime: '，用时 {s} 秒',
  failedBadge: '运行失败',
  failureBanner: '这个 notebook 没有运行到底：{where}出错（{kind}），之后没有输出。',
  failedCell: '第 {n} 个单元',
  aCell: '某个单元',
  linkToSection: '本节链接：{title}',
  outputOfCell: '第 {cell} 个单元的第 {n} 个输出',
  codeOfCell: '第 {cell} 个单元的代码',
  table: '表 {n}',
  codeBlock: '代码块 {n}',
  equation: '公式 {n}',
  showCode: '显示代码',
  showOutput: '显示输出',
  pagerLabel: '上一章和下一章',
  menu: '章节',
  htmlSanitized: '这个 HTML 输出的部分内容已被移除：本站不运行笔记本中的脚本，不从别处加载任何内容，也不让输出遮住页面。',
  unsupportedOutput: '（类型为 {types} 的输出，静态页面无法显示）',
  chapterDescription: '{title}：{site} 教程中的一章。',
  siteDescription: 'TensorFlow.js 的梯度累积和小批次归一化，用可运行的 TypeScript notebook 讲解。',
  indexTitle: '教程',
  searchDescription: '搜索 {site} 教程的正文、代码和输出。',
  getCode: '获取代码',
  install: '本库发布为 npm 包 {name}。TensorFlow.js 是它的对等依赖（{peer} {range}），版本由你的项目决定，所以两者要一起安装：',
  repository: '源代码、notebook 和参考文档都在代码仓库 {repo} 里。',
  noRepository: '每一章的页面都可以下载该章的 notebook；下面的参考文档介绍了这个库，以及它如何构建、如何测试。',
  reference: '参考文档',
  referenceLead: '项目 {docs} 目录中的文档，目前只有英文版。',
  docsInEnglish: '这份参考文档目前只有英文版。',
  docDescription: '{title}：{site} 的参考文档（英文）。',
  browser: {
    copy: '复制',
    copied: '已复制',
    copyFailed: '复制失败',
    copyLabel: '复制第 {n} 个单元的代码',
    cueBoth: '可上下左右滚动 ↔ ↕',
    cueSideways: '向右滚动查看更多 →',
    cueDown: '向下滚动查看更多 ↓',
    noIndex: '搜索索引没有加载。',
    noMatch: '没有章节提到“{q}”。',
    oneMatch: '“{q}”有 1 处匹配。',
    matches: '“{q}”共有 {n} 处匹配。',
    matchesTruncated: '“{q}”共有 {n} 处匹配，只显示最相关的 {max} 处。',
    inThe: { prose: '正文', code: '代码', output: '输出' },
    ofCell: '，第 {n} 个单元',
  },
  live: {
    heading: '在浏览器里运行',
    accumulation: '和上文一样，让 4 个 16 样本的微批次经过 {api}，再和在全部 64 个样本上做的一步 SGD 对比；用你的浏览器能提供的最快后端（有 WebGL 就用 WebGL，否则用 cpu）。',
    trainingLoop: '原文的训练循环：20 个 16 样本的微批次，每 4 个更新一次；用你的浏览器能提供的最快后端（有 WebGL 就用 WebGL，否则用 cpu）。',
    download: '按下按钮之前什么都不会下载（约 1 MB：TensorFlow.js 和本库）。',
    button: '在这个浏览器里运行',
    loading: '正在加载 TensorFlow.js 和 tfjs-accumulate……',
    running: '正在运行……',
    backend: '后端：{name}',
    failed: '这个例子无法在这里运行：{why}',
    numbers: {
      maxRelativeDifference: '最大相对差距',
      updateStep: '已执行的更新次数',
      updates: '已执行的更新次数',
      firstWindowLoss: '第一个窗口的损失',
      lastWindowLoss: '最后一个窗口的损失',
      ms: '用时',
    },
  },
};

/** The editions, keyed by `<html lang>`. */
export const UI: Record<'en' | 'zh-CN', UiStrings> = { en: EN, 'zh-CN': ZH };

/** The strings of a page's language; a language without a column gets English. */
export function ui(lang: PageLang): UiStrings {
  return lang === 'zh-CN' ? ZH : EN;
}

/** Fills `{name}` placeholders; a placeholder without a value is an error, never left in a page. */
export function fill(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (_, k: string) => {
    if (!(k in values)) throw new Error(`strings: no value for {${k}} in "${template}"`);
    return String(values[k]);
  });
}

/** {@link fill} for markup: the template and string values are escaped, SafeHtml values kept. */
export function fillHtml(template: string, values: Record<string, string | number | SafeHtml>): SafeHtml {
  const parts = template.split(/\{(\w+)\}/g);
  return trusted(
    parts
      .map((p, i) => {
        if (i % 2 === 0) return escapeHtml(p);
        if (!(p in values)) throw new Error(`strings: no value for {${p}} in "${template}"`);
        const v = values[p];
        return v instanceof SafeHtml ? v.value : escapeHtml(String(v));
      })
      .join(''),
  );
}
