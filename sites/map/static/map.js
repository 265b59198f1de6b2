// The map view: reads and writes #map=zoom/lat/lon (the fragment never reaches the server), pans by
// dragging, zooms with the wheel and the +/- buttons. The SVG's user units are metres around a centre.
(function () {
  "use strict";
  var svg = document.getElementById("map-svg");
  if (!svg) return;
  var lat0 = parseFloat(svg.dataset.lat0), lon0 = parseFloat(svg.dataset.lon0);
  var mx = 111320 * Math.cos(lat0 * Math.PI / 180), my = 110540;
  var parts = svg.dataset.view.split("/").map(Number);
  var view = { z: parts[0], lat: parts[1], lon: parts[2] };

  function parseHash() {
    var m = /map=(\d+)\/(-?[\d.]+)\/(-?[\d.]+)/.exec(location.hash);
    if (!m) return null;
    return { z: Math.max(3, Math.min(19, parseInt(m[1], 10))), lat: parseFloat(m[2]), lon: parseFloat(m[3]) };
  }
  function mpp(v) { return 156543.03392 * Math.cos(v.lat * Math.PI / 180) / Math.pow(2, v.z); }
  function hashOf(v) { var d = v.z >= 16 ? 5 : 4; return "#map=" + v.z + "/" + v.lat.toFixed(d) + "/" + v.lon.toFixed(d); }

  function apply(writeHash) {
    var w = svg.clientWidth || 1000, h = svg.clientHeight || 700, u = mpp(view);
    var cx = (view.lon - lon0) * mx, cy = (lat0 - view.lat) * my;
    svg.setAttribute("viewBox", [cx - w * u / 2, cy - h * u / 2, w * u, h * u].join(" "));
    svg.style.setProperty("--u", u);
    svg.setAttribute("class", "map-svg z" + view.z);
    var hash = hashOf(view);
    if (writeHash && location.hash !== hash) history.replaceState(null, "", location.pathname + location.search + hash);
    document.querySelectorAll(".map-controls a").forEach(function (a) {
      var d = parseInt(a.dataset.zoom, 10);
      a.setAttribute("href", hashOf({ z: Math.max(3, Math.min(19, view.z + d)), lat: view.lat, lon: view.lon }));
    });
  }

  var fromHash = parseHash();
  if (fromHash) view = fromHash;
  apply(true);
  window.addEventListener("hashchange", function () { var v = parseHash(); if (v) { view = v; apply(false); } });
  window.addEventListener("resize", function () { apply(false); });

  document.querySelectorAll(".map-controls a").forEach(function (a) {
    a.addEventListener("click", function (e) {
      e.preventDefault();
      view.z = Math.max(3, Math.min(19, view.z + parseInt(a.dataset.zoom, 10)));
      apply(true);
    });
  });

  svg.addEventListener("wheel", function (e) {
    e.preventDefault();
    var nz = Math.max(3, Math.min(19, view.z + (e.deltaY < 0 ? 1 : -1)));
    if (nz === view.z) return;
    // keep the point under the cursor in place
    var r = svg.getBoundingClientRect(), u = mpp(view);
    var px = e.clientX - r.left - r.width / 2, py = e.clientY - r.top - r.height / 2;
    var plon = view.lon + px * u / mx, plat = view.lat - py * u / my;
    view.z = nz;
    var u2 = mpp(view);
    view.lon = plon - px * u2 / mx; view.lat = plat + py * u2 / my;
    apply(true);
  }, { passive: false });

  var drag = null, moved = false;
  svg.addEventListener("pointerdown", function (e) {
    if (e.button !== 0) return;
    drag = { x: e.clientX, y: e.clientY, lat: view.lat, lon: view.lon }; moved = false;
  });
  window.addEventListener("pointermove", function (e) {
    if (!drag) return;
    var dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    if (!moved && Math.abs(dx) + Math.abs(dy) < 4) return;
    moved = true; svg.parentNode.classList.add("dragging");
    var u = mpp(view);
    view.lon = drag.lon - dx * u / mx; view.lat = drag.lat + dy * u / my;
    apply(false);
  });
  window.addEventListener("pointerup", function () {
    if (drag && moved) apply(true);
    drag = null; svg.parentNode.classList.remove("dragging");
  });
  // a drag must not follow the link under the pointer
  svg.addEventListener("click", function (e) { if (moved) { e.preventDefault(); moved = false; } }, true);
})();
