(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('docs-data').textContent);
  var isMcp = data.kind === 'mcp';
  var tokenInput = null;
  var forms = {};
  var own = Object.prototype.hasOwnProperty;
  // Bounds, so that a huge document stays usable: texts longer than
  // TEXT_LIMIT are cut (a button shows the rest), a method shows its first
  // ERRORS_SHOWN errors (a button adds the others) and TAGS_SHOWN tags.
  var TEXT_LIMIT = 5000;
  var ERRORS_SHOWN = 50;
  var TAGS_SHOWN = 20;
  // The tags (services): {name, description, count}, in the document's
  // order; tagIndex maps a name to its place.
  var tags = [];
  var tagIndex = Object.create(null);
  var untagged = 0;
  var sharedErrors = data.errors && typeof data.errors === 'object' ? data.errors : {};
  // One per entry: its section, its contents link, its tags, its text for
  // the filter. The filter: a tag ('' all, '-' untagged, else an index)
  // and a piece of the name.
  var rows = [];
  var groups = [];
  var filter = { tag: '', query: '' };
  var controls = null;

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function localPath(path) {
    return typeof path === 'string' && path.charAt(0) === '/' && path.charAt(1) !== '/' && path.charAt(1) !== '\\';
  }
  function link(text, path, className) {
    var a = el('a', className, text);
    if (localPath(path) || (typeof path === 'string' && path.charAt(0) === '#')) a.setAttribute('href', path);
    return a;
  }
  function pretty(value) {
    return JSON.stringify(value, null, 2);
  }
  function schemaBlock(schema) {
    return el('pre', 'schema', pretty(schema));
  }
  // A text node that shows at most TEXT_LIMIT characters until asked.
  function longText(tag, className, text) {
    text = String(text);
    if (text.length <= TEXT_LIMIT) return el(tag, className, text);
    var node = el(tag, className, text.slice(0, TEXT_LIMIT) + '\u2026 ');
    var more = el('button', 'more', 'Show all ' + text.length + ' characters');
    more.type = 'button';
    more.addEventListener('click', function () { node.textContent = text; });
    node.appendChild(more);
    return node;
  }
  // A <details> whose block is drawn when first opened.
  function lazyBlock(label, value) {
    var box = el('details', 'lazy');
    box.appendChild(el('summary', null, label));
    box.addEventListener('toggle', function () {
      if (box.open && box.childNodes.length === 1) box.appendChild(schemaBlock(value));
    });
    return box;
  }
  function list(value) {
    return Array.isArray(value) ? value : [];
  }

  function addTag(name, description) {
    if (typeof name !== 'string') return -1;
    if (own.call(tagIndex, name)) {
      var known = tags[tagIndex[name]];
      if (!known.description && typeof description === 'string') known.description = description;
      return tagIndex[name];
    }
    tagIndex[name] = tags.length;
    tags.push({ name: name, description: typeof description === 'string' ? description : '', count: 0 });
    return tags.length - 1;
  }
  function collectTags() {
    list(data.tags).forEach(function (t) { if (t && typeof t === 'object') addTag(t.name, t.description); });
    data.entries.forEach(function (entry) {
      var seen = Object.create(null);
      list(entry.tags).forEach(function (name) {
        var at = addTag(name);
        if (at >= 0 && !seen[at]) {
          seen[at] = true;
          tags[at].count += 1;
        }
      });
      if (!Object.keys(seen).length) untagged += 1;
    });
  }

  function renderMeta() {
    var meta = document.getElementById('meta');
    var kind = isMcp ? 'MCP tools' : 'JSON-RPC 2.0';
    meta.appendChild(el('p', null, kind + ' \u00b7 API version v' + data.version + (data.appVersion ? ' \u00b7 ' + data.appVersion : '')));
    if (data.description) meta.appendChild(longText('p', 'description', data.description));
    var endpoint = el('p', null, 'Endpoint: ');
    endpoint.appendChild(el('code', 'endpoint', data.endpoint));
    if (isMcp && data.protocol) endpoint.appendChild(document.createTextNode(' (try-it speaks protocol ' + data.protocol + ')'));
    meta.appendChild(endpoint);
    if (data.versions.length) {
      var versions = el('p', 'versions', 'Versions: ');
      data.versions.forEach(function (v) {
        versions.appendChild(link(v.name, v.href, v.current ? 'current' : null));
      });
      meta.appendChild(versions);
    }
    if (data.links.length) {
      var links = el('p', 'links', 'Documents: ');
      data.links.forEach(function (l) {
        links.appendChild(link(l[0], l[1]));
      });
      meta.appendChild(links);
    }
    if (data.tryIt) {
      var token = el('label', 'token', data.protected ? 'Token (required): ' : 'Token (optional): ');
      tokenInput = el('input');
      tokenInput.type = 'password';
      tokenInput.autocomplete = 'off';
      tokenInput.id = 'token';
      tokenInput.placeholder = 'sent as Authorization: Bearer \u2026';
      token.appendChild(tokenInput);
      meta.appendChild(token);
    }
  }

  function renderParams(entry, section) {
    if (!entry.params.length) {
      section.appendChild(el('p', 'none', isMcp ? 'No arguments.' : 'No parameters.'));
      return;
    }
    var table = el('table', 'params');
    var head = el('tr');
    ['Name', 'Required', 'Description', 'Schema'].forEach(function (h) { head.appendChild(el('th', null, h)); });
    table.appendChild(head);
    entry.params.forEach(function (p) {
      var row = el('tr');
      var name = el('td');
      name.appendChild(el('code', null, p.name));
      row.appendChild(name);
      row.appendChild(el('td', null, p.required ? 'yes' : 'no'));
      row.appendChild(longText('td', 'description', p.description || ''));
      var schema = el('td');
      schema.appendChild(schemaBlock(p.schema));
      row.appendChild(schema);
      table.appendChild(row);
    });
    section.appendChild(table);
  }

  function renderEntry(entry) {
    var section = el('section', 'entry');
    section.id = 'm-' + entry.name;
    section.appendChild(el('h2', 'name', entry.name));
    if (entry.title && entry.title !== entry.name) section.appendChild(el('p', 'summary', entry.title));
    if (entry.deprecated) section.appendChild(el('span', 'badge warn', 'deprecated'));
    Object.keys(entry.annotations).forEach(function (key) {
      var value = entry.annotations[key];
      if (typeof value !== 'object' || value === null) section.appendChild(el('span', 'badge', key + ': ' + value));
    });
    renderTags(entry, section);
    if (entry.description) section.appendChild(longText('div', 'description', entry.description));
    section.appendChild(el('h3', null, isMcp ? 'Arguments' : 'Parameters'));
    renderParams(entry, section);
    if (entry.inputSchema) {
      var input = el('details');
      input.appendChild(el('summary', null, 'inputSchema'));
      input.appendChild(schemaBlock(entry.inputSchema));
      section.appendChild(input);
    }
    if (entry.result) {
      section.appendChild(el('h3', null, isMcp ? 'Output schema' : 'Result'));
      section.appendChild(schemaBlock(entry.result));
    }
    renderErrors(entry, section);
    Object.keys(entry.annotations).forEach(function (key) {
      var value = entry.annotations[key];
      if (typeof value === 'object' && value !== null) {
        section.appendChild(el('h3', null, key));
        section.appendChild(schemaBlock(value));
      }
    });
    if (data.tryIt) section.appendChild(renderTry(entry));
    return section;
  }

  function renderTags(entry, section) {
    var names = list(entry.tags).filter(function (name) { return typeof name === 'string'; });
    if (!names.length) return;
    var line = el('p', 'tags', names.length === 1 ? 'Service: ' : 'Services: ');
    names.slice(0, TAGS_SHOWN).forEach(function (name) { line.appendChild(tagButton(name)); });
    if (names.length > TAGS_SHOWN) line.appendChild(el('span', 'badge', '+' + (names.length - TAGS_SHOWN) + ' more'));
    section.appendChild(line);
  }
  function tagButton(name) {
    var button = el('button', 'tag', name.length > 200 ? name.slice(0, 200) + '\u2026' : name);
    button.type = 'button';
    button.title = 'Show only the methods of this service';
    button.addEventListener('click', function () { selectTag(name); });
    return button;
  }

  // What one item of a method's errors says: a shared error (resolved by
  // the server into data.errors), one written out, or a reference the
  // server could not follow.
  function errorOf(use) {
    if (use && typeof use.shared === 'string') {
      if (own.call(sharedErrors, use.shared) && sharedErrors[use.shared] && typeof sharedErrors[use.shared] === 'object') {
        return sharedErrors[use.shared];
      }
      return { unresolved: use.shared, reason: 'no such shared error' };
    }
    if (use && use.inline && typeof use.inline === 'object') return use.inline;
    if (use && use.unresolved && typeof use.unresolved === 'object') {
      return { unresolved: String(use.unresolved.reference), reason: String(use.unresolved.reason) };
    }
    return { unresolved: '', reason: 'not an error' };
  }
  function errorRow(use) {
    var e = errorOf(use);
    var row = el('tr');
    var code = el('td');
    row.appendChild(code);
    if (e.unresolved !== undefined) {
      row.className = 'unresolved';
      code.appendChild(el('code', null, '?'));
      var what = longText('td', null, 'Unresolved reference ' + JSON.stringify(e.unresolved) + ': ' + e.reason);
      what.colSpan = 2;
      row.appendChild(what);
      return row;
    }
    code.appendChild(el('code', null, typeof e.code === 'number' ? e.code : '?'));
    row.appendChild(longText('td', 'message', typeof e.message === 'string' ? e.message : ''));
    var more = el('td');
    if (typeof e.description === 'string' && e.description) more.appendChild(longText('div', 'description', e.description));
    if (e.dataSchema !== undefined) more.appendChild(lazyBlock('data schema', e.dataSchema));
    if (e.data !== undefined) more.appendChild(lazyBlock('data', e.data));
    row.appendChild(more);
    return row;
  }
  function renderErrors(entry, section) {
    var errors = list(entry.errors);
    if (!errors.length) return;
    section.appendChild(el('h3', null, 'Errors'));
    var table = el('table', 'errors');
    var head = el('tr');
    ['Code', 'Message', 'Description and data'].forEach(function (h) { head.appendChild(el('th', null, h)); });
    table.appendChild(head);
    errors.slice(0, ERRORS_SHOWN).forEach(function (use) { table.appendChild(errorRow(use)); });
    section.appendChild(table);
    if (errors.length > ERRORS_SHOWN) {
      var more = el('button', 'more', 'Show ' + (errors.length - ERRORS_SHOWN) + ' more errors');
      more.type = 'button';
      more.addEventListener('click', function () {
        var rest = document.createDocumentFragment();
        errors.slice(ERRORS_SHOWN).forEach(function (use) { rest.appendChild(errorRow(use)); });
        table.appendChild(rest);
        more.remove();
      });
      section.appendChild(more);
    }
  }

  // The services (tags) with their descriptions, above the methods.
  function renderServices(main) {
    if (!tags.length) return;
    var box = el('section', 'services');
    box.id = 'services';
    box.appendChild(el('h2', null, 'Services'));
    var table = el('table', 'services');
    var head = el('tr');
    ['Service', isMcp ? 'Tools' : 'Methods', 'Description'].forEach(function (h) { head.appendChild(el('th', null, h)); });
    table.appendChild(head);
    tags.forEach(function (tag) {
      var row = el('tr');
      var name = el('td');
      name.appendChild(tagButton(tag.name));
      row.appendChild(name);
      row.appendChild(el('td', null, tag.count));
      row.appendChild(longText('td', 'description', tag.description));
      table.appendChild(row);
    });
    if (tags.length > 30) {
      var all = el('details');
      all.appendChild(el('summary', null, tags.length + ' services'));
      all.appendChild(table);
      box.appendChild(all);
    } else {
      box.appendChild(table);
    }
    main.appendChild(box);
  }

  // The filter above the contents: a piece of the name, a service.
  function renderFilters(toc) {
    var box = el('div', 'filters');
    var query = el('input');
    query.type = 'search';
    query.id = 'filter';
    query.autocomplete = 'off';
    query.placeholder = isMcp ? 'Filter tools' : 'Filter methods';
    query.setAttribute('aria-label', query.placeholder);
    query.addEventListener('input', function () {
      filter.query = query.value.trim().toLowerCase();
      apply();
    });
    box.appendChild(query);
    var select = null;
    if (tags.length) {
      select = el('select');
      select.id = 'tag-filter';
      select.setAttribute('aria-label', 'Service');
      var option = function (value, text) {
        var o = el('option', null, text.length > 120 ? text.slice(0, 120) + '\u2026' : text);
        o.value = value;
        select.appendChild(o);
      };
      option('', 'All services (' + data.entries.length + ')');
      tags.forEach(function (tag, i) { option(String(i), tag.name + ' (' + tag.count + ')'); });
      if (untagged) option('-', 'No service (' + untagged + ')');
      select.addEventListener('change', function () {
        filter.tag = select.value;
        apply();
        remember();
      });
      box.appendChild(select);
    }
    var count = el('p', 'count');
    count.setAttribute('aria-live', 'polite');
    box.appendChild(count);
    toc.appendChild(box);
    controls = { query: query, select: select, count: count };
  }

  // The contents: one group per service (a method under its first tag),
  // or a plain list without tags.
  function tocGroup(toc, label, description) {
    var group = { node: el('details', 'group'), links: null, visible: 0 };
    group.node.open = true;
    var summary = el('summary', null, label);
    if (description) summary.title = description.length > 300 ? description.slice(0, 300) + '\u2026' : description;
    group.node.appendChild(summary);
    toc.appendChild(group.node);
    groups.push(group);
    return group;
  }
  function renderToc(toc) {
    var byTag = [];
    var none = null;
    if (tags.length) {
      tags.forEach(function (tag) { byTag.push(tag.count ? tocGroup(toc, tag.name + ' (' + tag.count + ')', tag.description) : null); });
    }
    rows.forEach(function (row) {
      var target = toc;
      if (tags.length) {
        var first = row.first;
        var group = first >= 0 ? byTag[first] : none || (none = tocGroup(toc, 'No service (' + untagged + ')', ''));
        row.group = group;
        target = group.node;
      }
      row.link = link(row.entry.name, '#m-' + row.entry.name);
      target.appendChild(row.link);
    });
  }

  function matches(row) {
    if (filter.tag === '-' && row.tagCount) return false;
    if (filter.tag !== '' && filter.tag !== '-' && !own.call(row.tags, filter.tag)) return false;
    return !filter.query || row.text.indexOf(filter.query) >= 0;
  }
  function apply() {
    var shown = 0;
    groups.forEach(function (group) { group.visible = 0; });
    rows.forEach(function (row) {
      var ok = matches(row);
      if (row.section.hidden === ok) row.section.hidden = !ok;
      if (row.link.hidden === ok) row.link.hidden = !ok;
      if (ok) {
        shown += 1;
        if (row.group) row.group.visible += 1;
      }
    });
    groups.forEach(function (group) { group.node.hidden = group.visible === 0; });
    var noun = isMcp ? 'tools' : 'methods';
    controls.count.textContent = shown === rows.length ? rows.length + ' ' + noun : shown + ' of ' + rows.length + ' ' + noun;
  }
  function selectTag(name) {
    if (!own.call(tagIndex, name) || !controls.select) return;
    filter.tag = String(tagIndex[name]);
    controls.select.value = filter.tag;
    apply();
    remember();
    document.getElementById('entries').scrollIntoView();
  }
  function clearFilters() {
    filter.tag = '';
    filter.query = '';
    controls.query.value = '';
    if (controls.select) controls.select.value = '';
    apply();
  }
  // The chosen service in the address ('#tag=Name'), so it can be shared.
  function remember() {
    var tag = filter.tag !== '' && filter.tag !== '-' ? tags[Number(filter.tag)] : null;
    var target = tag ? '#tag=' + encodeURIComponent(tag.name) : window.location.pathname + window.location.search;
    try { window.history.replaceState(null, '', target); } catch (e) { /* not where history can change */ }
  }
  // '#tag=Name' selects that service; '#m-Name' shows that entry even if
  // the filter hid it.
  function followHash() {
    var hash = window.location.hash;
    var name;
    if (hash.indexOf('#tag=') === 0) {
      try { name = decodeURIComponent(hash.slice(5)); } catch (e) { return; }
      if (own.call(tagIndex, name) && controls.select) {
        filter.tag = String(tagIndex[name]);
        controls.select.value = filter.tag;
        apply();
      }
    } else if (hash.indexOf('#m-') === 0) {
      try { name = decodeURIComponent(hash.slice(1)); } catch (e) { return; }
      var target = document.getElementById(name);
      if (target && target.hidden) {
        clearFilters();
        target.scrollIntoView();
      }
    }
  }

  function renderTry(entry) {
    var box = el('div', 'try');
    box.appendChild(el('h3', null, 'Try it'));
    var area = el('textarea');
    area.id = 'params-' + entry.name;
    area.spellcheck = false;
    area.value = pretty(entry.example);
    area.setAttribute('aria-label', (isMcp ? 'arguments of ' : 'params of ') + entry.name);
    var button = el('button', null, 'Send');
    button.type = 'button';
    var status = el('span', 'status');
    var out = el('pre', 'response');
    out.id = 'out-' + entry.name;
    out.hidden = true;
    button.addEventListener('click', function () { send(entry, area, button, status, out); });
    box.appendChild(area);
    box.appendChild(button);
    box.appendChild(status);
    box.appendChild(out);
    forms[entry.name] = button;
    return box;
  }

  // A header value as the 2026-07-28 transport expects it: plain visible
  // ASCII, else =?base64?...?= of the UTF-8 bytes.
  function headerValue(value) {
    var text = typeof value === 'string' ? value : JSON.stringify(value);
    if (/^[\x20-\x7e]*$/.test(text)) return text;
    var bytes = new TextEncoder().encode(text);
    var binary = '';
    bytes.forEach(function (b) { binary += String.fromCharCode(b); });
    return '=?base64?' + btoa(binary) + '?=';
  }

  function request(entry, args) {
    var headers = { 'Content-Type': 'application/json' };
    var token = tokenInput && tokenInput.value.trim();
    if (token) headers.Authorization = 'Bearer ' + token;
    if (!isMcp) {
      return { headers: headers, body: { jsonrpc: '2.0', id: 1, method: entry.name, params: args } };
    }
    headers.Accept = 'application/json, text/event-stream';
    headers['MCP-Protocol-Version'] = data.protocol;
    headers['Mcp-Method'] = 'tools/call';
    headers['Mcp-Name'] = headerValue(entry.name);
    var properties = (entry.inputSchema && entry.inputSchema.properties) || {};
    Object.keys(properties).forEach(function (name) {
      var mirrored = properties[name] && properties[name]['x-mcp-header'];
      var value = args && typeof args === 'object' ? args[name] : undefined;
      if (typeof mirrored === 'string' && value !== undefined && value !== null && typeof value !== 'object') {
        headers['Mcp-Param-' + mirrored] = headerValue(value);
      }
    });
    var meta = {
      'io.modelcontextprotocol/protocolVersion': data.protocol,
      'io.modelcontextprotocol/clientCapabilities': {},
      'io.modelcontextprotocol/clientInfo': { name: 'docs-page', version: '1.0.0' }
    };
    return {
      headers: headers,
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: entry.name, arguments: args, _meta: meta } }
    };
  }

  function show(status, out, code, text, ok) {
    status.textContent = code;
    status.className = 'status ' + (ok ? 'ok' : 'bad');
    out.textContent = text;
    out.hidden = false;
    out.setAttribute('data-status', code);
  }

  function send(entry, area, button, status, out) {
    var args;
    try {
      args = JSON.parse(area.value || '{}');
    } catch (e) {
      show(status, out, 'invalid JSON', 'The ' + (isMcp ? 'arguments' : 'params') + ' are not JSON: ' + e.message, false);
      return;
    }
    var call = request(entry, args);
    var target = localPath(data.postPath) ? data.postPath : window.location.pathname;
    button.disabled = true;
    fetch(target, { method: 'POST', headers: call.headers, body: JSON.stringify(call.body), credentials: 'same-origin', cache: 'no-store' })
      .then(function (response) {
        return response.text().then(function (text) {
          var shown = text;
          try { shown = pretty(JSON.parse(text)); } catch (e) { /* not JSON: as it came */ }
          var failed = !response.ok || /"error"\s*:/.test(text) || /"isError"\s*:\s*true/.test(text);
          show(status, out, String(response.status), shown, !failed);
        });
      })
      .catch(function (e) { show(status, out, 'network error', String(e), false); })
      .then(function () { button.disabled = false; });
  }

  function render() {
    renderMeta();
    var toc = document.getElementById('toc');
    var main = document.getElementById('entries');
    if (data.note) main.appendChild(el('p', 'note', data.note));
    collectTags();
    renderFilters(toc);
    renderServices(main);
    data.entries.forEach(function (entry) {
      var row = { entry: entry, section: renderEntry(entry), link: null, group: null, tags: Object.create(null), tagCount: 0, first: -1 };
      list(entry.tags).forEach(function (name) {
        if (typeof name !== 'string' || !own.call(tagIndex, name)) return;
        var at = tagIndex[name];
        if (row.first < 0) row.first = at;
        if (!row.tags[at]) row.tagCount += 1;
        row.tags[at] = true;
      });
      row.text = (entry.name + '\n' + (typeof entry.title === 'string' ? entry.title : '')).toLowerCase();
      rows.push(row);
      main.appendChild(row.section);
    });
    renderToc(toc);
    apply();
    if (!data.entries.length) main.appendChild(el('p', 'none', isMcp ? 'No tools.' : 'No methods.'));
    if (data.schemas && typeof data.schemas === 'object' && Object.keys(data.schemas).length) {
      var shared = el('section', 'entry schemas');
      shared.id = 'schemas';
      shared.appendChild(el('h2', null, 'Schemas'));
      Object.keys(data.schemas).forEach(function (name) {
        var one = el('details');
        one.id = 'schema-' + name;
        one.appendChild(el('summary', null, name));
        one.appendChild(schemaBlock(data.schemas[name]));
        shared.appendChild(one);
      });
      main.appendChild(shared);
      toc.appendChild(link('Schemas', '#schemas'));
    }
    document.body.setAttribute('data-rendered', String(data.entries.length));
  }

  // '#try=Name' runs that entry's example once the page is drawn.
  function autoRun() {
    var match = /^#try=(.+)$/.exec(window.location.hash);
    if (!match) return;
    var name;
    try { name = decodeURIComponent(match[1]); } catch (e) { return; }
    var button = Object.prototype.hasOwnProperty.call(forms, name) ? forms[name] : null;
    if (button) {
      button.scrollIntoView();
      button.click();
    }
  }

  render();
  followHash();
  window.addEventListener('hashchange', followHash);
  autoRun();
})();
