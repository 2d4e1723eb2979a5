(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('docs-data').textContent);
  var isMcp = data.kind === 'mcp';
  var tokenInput = null;
  var forms = {};

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

  function renderMeta() {
    var meta = document.getElementById('meta');
    var kind = isMcp ? 'MCP tools' : 'JSON-RPC 2.0';
    meta.appendChild(el('p', null, kind + ' \u00b7 API version v' + data.version + (data.appVersion ? ' \u00b7 ' + data.appVersion : '')));
    if (data.description) meta.appendChild(el('p', 'description', data.description));
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
      row.appendChild(el('td', 'description', p.description || ''));
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
    if (entry.description) section.appendChild(el('div', 'description', entry.description));
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
    data.entries.forEach(function (entry) {
      toc.appendChild(link(entry.name, '#m-' + entry.name));
      main.appendChild(renderEntry(entry));
    });
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
  autoRun();
})();
