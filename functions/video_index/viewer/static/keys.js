// The page's keys (docs/viewer.md "Deep links and keys"): k or space pause, j/l seek ten
// seconds, a annotates, [ and ] open the day before and after. Fields keep their keys; the
// timeline and the calendar handle (and prevent) their own.

import { can } from "./access.js";

/** Listens on the document; `dayShown()` says whether a day's timeline is shown;
 * `openAdjacent(±1)` opens the day before or after the open one (false: no day is open). */
export function setupKeys({ video, player, annotations, dayShown, openAdjacent }) {
  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.target.closest("input, textarea, select, dialog")) return;
    switch (event.key) {
      case "k":
        player.togglePause();
        break;
      case " ":
        if (event.target !== document.body && event.target !== video) return;
        player.togglePause();
        break;
      case "j":
        player.seekBy(-10);
        break;
      case "l":
        player.seekBy(10);
        break;
      case "a":
        if (!dayShown() || !can("annotate")) return;
        annotations.openNew();
        break;
      case "[":
      case "]":
        if (!openAdjacent(event.key === "[" ? -1 : 1)) return;
        break;
      default:
        return;
    }
    event.preventDefault();
  });
}
