// Marks each table that is wider than the content column and fits once long words may break
// (tables.css breaks them in a marked table). A table that fits as it is keeps its words whole,
// and one that does not fit even so (a phone's width) keeps the theme's sideways scrolling.
// Runs once the page and the theme's own script (which wraps each table in a scrolling box)
// are done, and again when the window's width changes.

function scrollsSideways(table) {
  const box = table.closest(".md-typeset__scrollwrap") || table;
  return box.scrollWidth > box.clientWidth;
}

function fitTables() {
  for (const table of document.querySelectorAll(".md-typeset table:not([class])")) {
    delete table.dataset.wrapWords;
    if (scrollsSideways(table)) {
      table.dataset.wrapWords = "";
      if (scrollsSideways(table)) {
        delete table.dataset.wrapWords;
      }
    }
  }
}

let fitting = false;
window.addEventListener("load", fitTables);
window.addEventListener("resize", () => {
  if (!fitting) {
    fitting = true;
    requestAnimationFrame(() => {
      fitting = false;
      fitTables();
    });
  }
});
