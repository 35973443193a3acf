/** Small SVG charts (no chart library): a multi-series line chart and a bar chart with a line overlay. */
import type { ReactNode } from 'react';

export interface Series {
  name: string;
  /** CSS colour class suffix (`s1`…`s6`). */
  tone: string;
  /** One value per x (null = gap). */
  values: (number | null)[];
}

interface Frame {
  width: number;
  height: number;
  pad: { l: number; r: number; t: number; b: number };
}

const FRAME: Frame = { width: 720, height: 220, pad: { l: 40, r: 44, t: 12, b: 26 } };
/** One small multiple (a measure of its own, side by side with the others). */
const SMALL: Frame = { width: 360, height: 150, pad: { l: 40, r: 12, t: 10, b: 24 } };

function path(values: (number | null)[], x: (i: number) => number, y: (v: number) => number): string {
  let d = '';
  let pen = false;
  values.forEach((v, i) => {
    if (v === null || !Number.isFinite(v)) {
      pen = false;
      return;
    }
    d += `${pen ? 'L' : 'M'}${x(i).toFixed(1)},${y(v).toFixed(1)}`;
    pen = true;
  });
  return d;
}

function xLabels(labels: string[], x: (i: number) => number, baseY: number): ReactNode[] {
  const step = Math.max(1, Math.ceil(labels.length / 7));
  const out: ReactNode[] = [];
  for (let i = 0; i < labels.length; i += step)
    out.push(
      <text key={i} x={x(i)} y={baseY + 16} className="axis-label" textAnchor="middle">
        {labels[i]}
      </text>,
    );
  return out;
}

/** Lines over shared x labels, y from `min` to `max`. */
export function LineChart(p: {
  title: string;
  labels: string[];
  series: Series[];
  min: number;
  max: number;
  unit?: string;
  ticks?: number[];
  compact?: boolean;
}) {
  const f = p.compact ? SMALL : FRAME;
  const w = f.width - f.pad.l - f.pad.r;
  const h = f.height - f.pad.t - f.pad.b;
  const x = (i: number) => f.pad.l + (p.labels.length <= 1 ? w / 2 : (i * w) / (p.labels.length - 1));
  const y = (v: number) => f.pad.t + h - ((v - p.min) / (p.max - p.min || 1)) * h;
  const ticks = p.ticks ?? [p.min, (p.min + p.max) / 2, p.max];
  return (
    <figure className={`chart${p.compact ? ' compact' : ''}`}>
      <figcaption>{p.title}</figcaption>
      <svg viewBox={`0 0 ${f.width} ${f.height}`} role="img" aria-label={`${p.title}: ${p.series.map((s) => s.name).join(', ')}`}>
        {ticks.map((t) => (
          <g key={t}>
            <line x1={f.pad.l} x2={f.width - f.pad.r} y1={y(t)} y2={y(t)} className="grid" />
            <text x={f.pad.l - 6} y={y(t) + 4} className="axis-label" textAnchor="end">
              {t}
              {p.unit ?? ''}
            </text>
          </g>
        ))}
        {xLabels(p.labels, x, f.pad.t + h)}
        {p.series.map((s) => (
          <path key={s.name} d={path(s.values, x, y)} className={`line ${s.tone}`} />
        ))}
      </svg>
      {p.series.length > 1 || !p.compact ? (
        <ul className="legend">
          {p.series.map((s) => (
            <li key={s.name}>
              <span className={`swatch ${s.tone}`} />
              {s.name}
            </li>
          ))}
        </ul>
      ) : null}
    </figure>
  );
}

/** Daily bars (left axis) with an optional line on a right axis (e.g. ACWR). */
export function BarLineChart(p: {
  title: string;
  labels: string[];
  bars: number[];
  barName: string;
  line?: { name: string; values: (number | null)[]; max: number; bands?: [number, number] };
}) {
  const f = FRAME;
  const w = f.width - f.pad.l - f.pad.r;
  const h = f.height - f.pad.t - f.pad.b;
  const n = Math.max(1, p.labels.length);
  const bw = w / n;
  const maxBar = Math.max(1, ...p.bars);
  const x = (i: number) => f.pad.l + bw * i + bw / 2;
  const yb = (v: number) => f.pad.t + h - (v / maxBar) * h;
  const yl = (v: number) => f.pad.t + h - (v / (p.line?.max ?? 1)) * h;
  return (
    <figure className="chart">
      <figcaption>{p.title}</figcaption>
      <svg viewBox={`0 0 ${f.width} ${f.height}`} role="img" aria-label={p.title}>
        {p.line?.bands ? <rect x={f.pad.l} width={w} y={yl(p.line.bands[1])} height={yl(p.line.bands[0]) - yl(p.line.bands[1])} className="band" /> : null}
        <line x1={f.pad.l} x2={f.width - f.pad.r} y1={f.pad.t + h} y2={f.pad.t + h} className="grid" />
        <text x={f.pad.l - 6} y={f.pad.t + 8} className="axis-label" textAnchor="end">
          {Math.round(maxBar)}
        </text>
        <text x={f.pad.l - 6} y={f.pad.t + h} className="axis-label" textAnchor="end">
          0
        </text>
        {p.bars.map((v, i) => (
          <rect key={i} x={f.pad.l + bw * i + 1} width={Math.max(1, bw - 2)} y={yb(v)} height={f.pad.t + h - yb(v)} className="bar" />
        ))}
        {p.line ? (
          <>
            <path d={path(p.line.values, x, yl)} className="line s2" />
            <text x={f.width - f.pad.r + 6} y={f.pad.t + 8} className="axis-label">
              {p.line.max}
            </text>
            <text x={f.width - f.pad.r + 6} y={yl(1) + 4} className="axis-label">
              1.0
            </text>
          </>
        ) : null}
        {xLabels(p.labels, x, f.pad.t + h)}
      </svg>
      <ul className="legend">
        <li>
          <span className="swatch bar" />
          {p.barName} (left axis)
        </li>
        {p.line ? (
          <li>
            <span className="swatch s2" />
            {p.line.name} (right axis){p.line.bands ? `; shaded ${p.line.bands[0]}–${p.line.bands[1]}` : ''}
          </li>
        ) : null}
      </ul>
    </figure>
  );
}
