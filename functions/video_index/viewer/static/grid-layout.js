// The grid's wall (docs/viewer.md, "Cameras in step"): tiles laid in the rows and columns
// that give each picture the most room in the window, like a control room's wall — 2 × 2
// for four cameras, 3 × 3 for nine, three as 2 × 2 (one cell empty) or 3 × 1, whichever
// shows them larger — above the shared timeline, which keeps its own height.

/** Gap between tiles (px), as the CSS has it. */
const GAP = 8;
/** Room kept under the wall besides the timeline (px): its margin and a little air. */
const BELOW = 24;
/** The smallest tile width (px): below it the wall scrolls rather than shrinking further. */
const MIN_TILE_WIDTH = 160;

/**
 * The columns and rows of `count` tiles of aspect `aspect` (width / height) in a `width` ×
 * `height` area, `gap` apart, that make the tiles largest; of equal sizes, the one with
 * fewer empty cells. Returns {columns, rows, tileWidth, tileHeight} (px).
 */
export function wallLayout(count, width, height, aspect = 16 / 9, gap = GAP) {
  let best = null;
  for (let columns = 1; columns <= count; columns += 1) {
    const rows = Math.ceil(count / columns);
    const byWidth = (width - gap * (columns - 1)) / columns;
    const byHeight = ((height - gap * (rows - 1)) / rows) * aspect;
    const tileWidth = Math.max(Math.min(byWidth, byHeight), 0);
    const empty = columns * rows - count;
    if (!best || tileWidth > best.tileWidth + 0.5 || (Math.abs(tileWidth - best.tileWidth) <= 0.5 && empty < best.empty)) {
      best = { columns, rows, tileWidth, empty };
    }
  }
  const tileWidth = Math.floor(Math.max(best.tileWidth, MIN_TILE_WIDTH));
  return { columns: best.columns, rows: best.rows, tileWidth, tileHeight: Math.floor(tileWidth / aspect) };
}

/** Lay `wall`'s tiles out in the window above `below` (the timeline), now and whenever the
 * window changes size. */
export function fitWall(wall, below) {
  const fit = () => {
    const count = wall.children.length;
    if (!count) return;
    const top = wall.getBoundingClientRect().top + window.scrollY;
    const height = window.innerHeight - top - below.getBoundingClientRect().height - BELOW;
    const layout = wallLayout(count, wall.clientWidth, height);
    wall.style.gridTemplateColumns = `repeat(${layout.columns}, ${layout.tileWidth}px)`;
    Object.assign(wall.dataset, { columns: String(layout.columns), rows: String(layout.rows) });
  };
  fit();
  window.addEventListener("resize", fit);
  new ResizeObserver(fit).observe(below);
  return fit;
}
