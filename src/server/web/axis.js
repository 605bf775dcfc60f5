// Axis helpers shared by the view scripts that follow it on the page: tick steps of 1, 2 or 5
// times a power of ten, so that labels read as round numbers.
var SextantAxis = (function () {
  'use strict';
  // The round step that splits `span` into about `target` intervals.
  function niceStep(span, target) {
    if (!(span > 0) || !(target > 0)) return 1;
    var raw = span / target;
    var p = Math.pow(10, Math.floor(Math.log10(raw)));
    var m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
  }
  // Ticks from 0 to the first multiple of the step at or above `max` (about `target` of them).
  function ticks(max, target) {
    var step = niceStep(max, target);
    var top = Math.max(step, Math.ceil(max / step - 1e-9) * step);
    var out = [];
    for (var k = 0; k * step <= top + step * 1e-9; k++) out.push(k * step);
    return {step: step, top: top, ticks: out};
  }
  return {niceStep: niceStep, ticks: ticks};
})();
