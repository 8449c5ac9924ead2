// index.html's re-ranking for another read mix, as `h5sweep whatif` ranks: the mix's time per
// store from its mean read time per case, the paired interval from the shipped resamplings, a
// store tied with the best where its score's interval over the best's reaches 1, and the
// smallest file of the tied chosen (files within 5% count as equal, then the best score).
function h5quantile(sorted, q) {
  const pos = q * (sorted.length - 1), lo = Math.floor(pos), hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}
function h5interval(values) {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  return sorted.length ? [h5quantile(sorted, 0.025), h5quantile(sorted, 0.975)] : [NaN, NaN];
}
function h5rank(data, weights) {
  const cases = data.cases.filter(c => (weights[c] || 0) > 0);
  if (!cases.length) return null;
  const stores = data.stores, n = stores.length, samples = stores[0].boot[cases[0]].length;
  const mix = stores.map(s => cases.reduce((t, c) => t + weights[c] * s.means[c], 0));
  const boot = stores.map(s => Array.from({length: samples},
    (_, k) => cases.reduce((t, c) => t + weights[c] * s.boot[c][k], 0)));
  const ref = stores.findIndex(s => s.reference);
  const score = mix.map(m => m / mix[ref]);
  const scoreBoot = boot.map(b => b.map((v, k) => v / boot[ref][k]));
  const eligible = [...Array(n).keys()].filter(i => stores[i].meets);
  const rows = [...Array(n).keys()].map(i => ({i: i, store: stores[i].name, mix: mix[i], ci: h5interval(boot[i]),
    score: score[i], file: stores[i].file_bytes, meets: stores[i].meets, tied: false, chosen: false}));
  if (eligible.length) {
    const best = eligible.reduce((a, b) => (score[b] < score[a] ? b : a));
    for (const i of eligible) {
      const low = h5interval(scoreBoot[i].map((v, k) => v / scoreBoot[best][k]))[0];
      rows[i].toBest = score[i] / score[best];
      rows[i].tied = i === best || low <= 1.0;
    }
    const tied = rows.filter(r => r.tied);
    const smallest = Math.min(...tied.map(r => r.file));
    const small = tied.filter(r => r.file <= smallest * SAME_SIZE);
    small.sort((a, b) => a.score - b.score || a.file - b.file);
    small[0].chosen = true;
  }
  rows.sort((a, b) => (b.meets - a.meets) || (a.score - b.score));
  rows.forEach((r, k) => { r.rank = k + 1; });
  return rows;
}
function h5ms(seconds) {
  const ms = seconds * 1e3;
  return (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toPrecision(3)) + ' ms';
}
function h5show() {
  const weights = {};
  document.querySelectorAll('#whatif input').forEach(e => { weights[e.name] = Number(e.value); });
  for (const [fs, data] of Object.entries(RERANK)) {
    const rows = h5rank(data, weights);
    const out = document.getElementById('whatif-' + fs);
    if (!rows) { out.innerHTML = '<p>No positive weight: nothing to rank.</p>'; continue; }
    const chosen = rows.find(r => r.chosen);
    const cells = rows.map(r => {
      const per = data.cases.map(c => c + ' ' + h5ms(data.stores[r.i].means[c])).join(', ');
      return '<tr title="mean per read: ' + per + '"><td>' + r.rank + '</td><td>' + r.store + '</td><td>' + h5ms(r.mix) +
        ' (' + h5ms(r.ci[0]) + '-' + h5ms(r.ci[1]) + ')</td><td>' + (chosen ? (r.mix / chosen.mix).toFixed(2) + 'x' : '') +
        '</td><td>' + (r.chosen ? 'chosen' : r.tied ? 'tied' : r.meets ? '' : 'beyond the limits') + '</td></tr>';
    });
    out.innerHTML = '<p class="choice" data-store="' + (chosen ? chosen.store : '') + '">On ' + fs + ', choose <strong>' +
      (chosen ? chosen.store : 'none') + '</strong>' + (chosen ? ': ' + h5ms(chosen.mix) + ' per unit of work (95% interval ' +
      h5ms(chosen.ci[0]) + '-' + h5ms(chosen.ci[1]) + ')' : '') + '</p><table><tr><th>rank</th><th>store</th>' +
      '<th>mix time (95% interval)</th><th>to the choice</th><th></th></tr>' + cells.join('') + '</table>';
  }
}
document.querySelectorAll('#whatif input').forEach(e => e.addEventListener('input', h5show));
h5show();
