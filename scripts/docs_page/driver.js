// The test driver of the hostile docs page (scripts/docs_page/hostile.py
// serves it after the page's own script, allowed by its hash): it uses the
// page as a person would (the service filter, the name filter, the tag
// buttons, "show more", "show all", a link to a filtered-out method) and
// writes what went wrong into <body data-checks="[...]"> ("[]": nothing),
// with data-checked="done" once finished.
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('docs-data').textContent);
  var expect = JSON.parse(document.getElementById('docs-expect').textContent);
  var failures = [];
  var started = performance.now();

  function check(ok, what) {
    if (!ok) failures.push(what);
  }
  function visible(selector) {
    return Array.prototype.filter.call(document.querySelectorAll(selector), function (n) {
      return !n.hidden && !n.closest('[hidden]');
    }).length;
  }
  function section(name) {
    return document.getElementById('m-' + name);
  }
  function finish() {
    document.body.setAttribute('data-checks', JSON.stringify(failures));
    document.body.setAttribute('data-checked', 'done');
    document.body.setAttribute('data-driver-ms', String(Math.round(performance.now() - started)));
    document.body.setAttribute('data-render-ms', String(Math.round(started)));
  }

  try {
    // Drawn, and nothing from the texts became markup.
    check(document.body.getAttribute('data-rendered') === String(data.entries.length), 'not every entry was drawn');
    check(document.querySelectorAll('section.entry[id^="m-"]').length === data.entries.length, 'entry sections missing');
    check(document.querySelectorAll('img, iframe, object, embed, link, meta[http-equiv], base, form').length === 0,
      'an element came from the texts');
    check(document.scripts.length === 4, 'a script element came from the texts: ' + document.scripts.length);
    var handlers = 0;
    Array.prototype.forEach.call(document.querySelectorAll('*'), function (node) {
      Array.prototype.forEach.call(node.attributes, function (a) {
        if (/^on/i.test(a.name) || /^\s*javascript:/i.test(a.value)) handlers += 1;
      });
    });
    check(handlers === 0, handlers + ' event handler or javascript: attributes');

    // The services, with their descriptions (cut when huge).
    var services = document.querySelectorAll('table.services tr');
    check(services.length === data.tags.length + 1, 'services rows: ' + services.length);
    check(document.querySelector('#services details') !== null, 'many services fold into a <details>');

    // The method with 10,000 errors: the first 50, then the rest on demand.
    var big = section(expect.big);
    var rows = big.querySelectorAll('table.errors tr');
    check(rows.length === 51, 'errors shown at first: ' + rows.length);
    var more = big.querySelector(':scope > button.more');
    check(more && more.textContent === 'Show ' + (expect.bigErrors - 50) + ' more errors', 'the more-errors button');
    var t0 = performance.now();
    more.click();
    var clickMs = performance.now() - t0;
    rows = big.querySelectorAll('table.errors tr');
    check(rows.length === expect.bigErrors + 1, 'all errors after the click: ' + rows.length);
    check(clickMs < 5000, 'showing 10,000 errors took ' + Math.round(clickMs) + ' ms');
    check(big.querySelectorAll('table.errors tr.unresolved').length === expect.bigUnresolved,
      'unresolved rows: ' + big.querySelectorAll('table.errors tr.unresolved').length);
    var codes = Array.prototype.map.call(big.querySelectorAll('table.errors tr td:first-child code'), function (c) {
      return c.textContent;
    });
    check(codes.indexOf('-32602') >= 0 && codes.indexOf('9999') >= 0, 'error codes shown');
    check(codes.indexOf(String(expect.protoCode)) >= 0, 'an error keyed __proto__ is resolved');
    var texts = big.querySelector('table.errors').textContent;
    check(texts.indexOf(expect.hostile) >= 0, 'a hostile message is shown as text');
    check(texts.indexOf('Unresolved reference "#/components/errors/Missing": no such error') >= 0,
      'a missing reference is reported');
    check(texts.indexOf('a reference cycle') >= 0, 'a cycle is reported');
    check(texts.indexOf('"constructor": no such shared error') >= 0, 'an unknown shared key is not the prototype\'s');

    // A huge description: cut, then whole on demand.
    var huge = section(expect.huge).querySelector('div.description');
    check(huge.textContent.length < 5100, 'the huge description is cut: ' + huge.textContent.length);
    huge.querySelector('button.more').click();
    check(huge.textContent === expect.hugeText, 'the whole description after the click');

    // The service filter: the select, then a tag button, then the name filter.
    var select = document.getElementById('tag-filter');
    var query = document.getElementById('filter');
    function choose(value) {
      select.value = value;
      select.dispatchEvent(new Event('change'));
    }
    function type(text) {
      query.value = text;
      query.dispatchEvent(new Event('input'));
    }
    var s3 = Array.prototype.filter.call(select.options, function (o) { return o.textContent.indexOf('S3 (') === 0; })[0];
    choose(s3.value);
    check(visible('section.entry[id^="m-"]') === expect.perService, 'entries of S3: ' + visible('section.entry[id^="m-"]'));
    check(visible('#toc a[href^="#m-"]') === expect.perService, 'contents links of S3');
    check(window.location.hash === '#tag=S3', 'the address names the service: ' + window.location.hash);
    type('m3');
    check(visible('section.entry[id^="m-"]') === expect.perServiceM3, 'S3 named m3*: ' + visible('section.entry[id^="m-"]'));
    type('');
    ['__proto__', 'constructor', expect.hostile].forEach(function (name) {
      var button = Array.prototype.filter.call(document.querySelectorAll('p.tags button.tag'), function (b) {
        return b.textContent === name;
      })[0];
      check(!!button, 'a tag button ' + JSON.stringify(name));
      if (!button) return;
      button.click();
      check(visible('section.entry[id^="m-"]') === 1, 'entries tagged ' + JSON.stringify(name) + ': ' + visible('section.entry[id^="m-"]'));
      check(decodeURIComponent(window.location.hash) === '#tag=' + name, 'the address names ' + JSON.stringify(name));
    });
    choose('-');
    check(visible('section.entry[id^="m-"]') === expect.untagged, 'untagged entries: ' + visible('section.entry[id^="m-"]'));
    choose('');
    check(visible('section.entry[id^="m-"]') === data.entries.length, 'all entries again');
    check(document.querySelector('#toc .count').textContent === data.entries.length + ' methods', 'the count');
    var tagsLine = section(expect.manyTags).querySelector('p.tags');
    check(tagsLine.querySelectorAll('button.tag').length === 20 && /\+80 more/.test(tagsLine.textContent),
      'tags per method are bounded');

    // Lazy blocks draw when opened; a link to a filtered-out method clears the filter.
    var lazy = big.querySelector('details.lazy');
    lazy.open = true;
    choose(s3.value);
    window.location.hash = '#m-' + expect.elsewhere;
    setTimeout(function () {
      try {
        check(lazy.querySelector('pre') !== null, 'an opened data schema is drawn');
        check(!section(expect.elsewhere).hidden, 'the linked method is shown');
        check(visible('section.entry[id^="m-"]') === data.entries.length, 'the link cleared the filter');
      } catch (e) {
        failures.push('driver: ' + e);
      }
      finish();
    }, 200);
  } catch (e) {
    failures.push('driver: ' + e + ' ' + (e && e.stack));
    finish();
  }
})();
