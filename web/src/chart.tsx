// A time-series chart (uPlot) that follows its container's width and the colour scheme.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Series {
  label: string;
  color: string;
  values: number[];
}

/** `bars`: one bar per period (the Metrics page) instead of lines. */
export function TimeChart({
  times,
  series,
  height = 260,
  label,
  bars = false,
}: {
  times: number[];
  series: Series[];
  height?: number;
  label: string;
  bars?: boolean;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const dark = matchMedia('(prefers-color-scheme: dark)').matches;
    const axis = { stroke: dark ? '#9ca3af' : '#6b7280', grid: { stroke: dark ? '#1f2937' : '#eef0f3', width: 1 }, ticks: { show: false } };
    const plot = new uPlot(
      {
        width: el.clientWidth,
        height,
        cursor: { y: false },
        // Bars: one series per chart, named by its card's title; half a period of room at each end.
        legend: { live: false, show: !bars },
        scales: {
          x: bars ? { time: true, range: (_u, min, max) => [min - 43_200, max + 43_200] } : { time: true },
          y: { range: (_u, _min, max) => [0, Math.max(4, max * 1.1)] },
        },
        axes: [axis, { ...axis, size: 48 }],
        series: [
          {},
          ...series.map((s) =>
            bars
              ? { label: s.label, stroke: s.color, width: 1, fill: `${s.color}cc`, points: { show: false }, paths: uPlot.paths.bars!({ size: [0.7, 40] }) }
              : { label: s.label, stroke: s.color, width: 2, points: { show: times.length < 40 }, fill: `${s.color}14` },
          ),
        ],
      },
      [times, ...series.map((s) => s.values)],
      el,
    );
    const ro = new ResizeObserver(() => plot.setSize({ width: el.clientWidth, height }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      plot.destroy();
    };
  }, [times, series, height, bars]);
  return <div class="chart" ref={box} role="img" aria-label={label} />;
}
