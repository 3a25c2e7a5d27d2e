// Geodesic console: polls pathcomp's JSON API (docs/console-api.md) about
// once a second and draws the backbone map, the route between two chosen
// facilities, the elephant MLU, agent chains, the single-facility audit and
// recent events. No framework, nothing loaded from elsewhere.
//
// Elements carry stable data attributes (data-facility, data-link,
// data-state, data-path, ...) for people's tools and the browser test.
'use strict';

(function () {
  const POLL_MS = 1000;
  const MAX_EVENTS = 100;
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const MAP_WIDTH = 800;
  const MAP_PAD = 40;

  const query = new URLSearchParams(window.location.search);
  const view = {
    src: query.get('src') || '',
    dst: query.get('dst') || '',
    facilityIds: [],      // as the selectors list them
    eventsAfter: '0',     // the newest event number seen
    events: [],           // newest first
  };

  function byId(id) { return document.getElementById(id); }

  function element(tag, attributes, text) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function svgElement(tag, attributes) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
    return node;
  }

  function ms(us) { return (Number(us) / 1000).toFixed(1); }
  function percent(ratio) { return (100 * ratio).toFixed(0) + ' %'; }

  async function getJson(path) {
    const response = await fetch(path, { cache: 'no-store' });
    const body = await response.json();
    if (!response.ok) throw new Error(path + ': ' + (body.error || response.status));
    return body;
  }

  // "down", "drained", "degraded", "unknown" or "up": what matters most first.
  function linkState(link) {
    const oper = link.health ? link.health.state : 'OPER_STATE_UNKNOWN';
    if (oper === 'OPER_STATE_DOWN') return 'down';
    if (link.admin_state === 'ADMIN_STATE_DRAINED') return 'drained';
    if (oper === 'OPER_STATE_DEGRADED') return 'degraded';
    if (oper === 'OPER_STATE_UP') return 'up';
    return 'unknown';
  }

  function utilizationClass(ratio) {
    if (ratio >= 0.8) return 'util-high';
    if (ratio >= 0.5) return 'util-mid';
    return 'util-low';
  }

  // Equirectangular, centred on the facilities' bounding box; longitudes are
  // scaled by the cosine of the middle latitude, and latitudes stretched at
  // most 2x when the backbone is much wider than tall, so it fills the panel.
  function projection(facilities) {
    const lats = facilities.map((f) => f.position.latitude_deg);
    const lons = facilities.map((f) => f.position.longitude_deg);
    const minLat = Math.min(...lats), maxLat = Math.max(...lats);
    const minLon = Math.min(...lons), maxLon = Math.max(...lons);
    const k = Math.cos(((minLat + maxLat) / 2) * Math.PI / 180);
    const spanX = Math.max((maxLon - minLon) * k, 1e-6);
    const spanY = Math.max(maxLat - minLat, 1e-6);
    const sx = (MAP_WIDTH - 2 * MAP_PAD) / spanX;
    const sy = Math.min(sx * 2, 380 / spanY);
    const height = Math.max(260, Math.min(560, spanY * sy + 2 * MAP_PAD));
    const offsetY = (height - spanY * sy) / 2;
    return {
      height: height,
      point: (position) => ({
        x: MAP_PAD + (position.longitude_deg - minLon) * k * sx,
        y: offsetY + (maxLat - position.latitude_deg) * sy,
      }),
    };
  }

  // A directed link's line, moved to the right of its direction of travel so
  // both directions of a pair show side by side.
  function linkGeometry(from, to, offset) {
    const dx = to.x - from.x, dy = to.y - from.y;
    const length = Math.hypot(dx, dy) || 1;
    const nx = -dy / length * offset, ny = dx / length * offset;
    return { x1: from.x + nx, y1: from.y + ny, x2: to.x + nx, y2: to.y + ny };
  }

  // Where a facility's label goes: above right, or away from its nearest
  // neighbour when that one is close (iad and nyc, lon and ams), and never
  // past the map's right edge.
  function labelPlacement(point, points) {
    let nearest = null, distance = Infinity;
    for (const other of points) {
      const d = Math.hypot(other.x - point.x, other.y - point.y);
      if (other !== point && d < distance) { nearest = other; distance = d; }
    }
    let dx = 1, dy = -1;
    if (nearest && distance < 80) {
      dx = point.x >= nearest.x ? 1 : -1;
      dy = point.y >= nearest.y ? 1 : -1;
    }
    if (point.x > MAP_WIDTH - 60) dx = -1;
    return { x: point.x + dx * 10, y: point.y + (dy > 0 ? 20 : -9), anchor: dx > 0 ? 'start' : 'end' };
  }

  function drawMap(topology, plan, route) {
    const map = byId('map');
    const facilities = topology.facilities.filter((f) => f.position);
    if (facilities.length === 0) return;
    const projected = projection(facilities);
    map.setAttribute('viewBox', '0 0 ' + MAP_WIDTH + ' ' + projected.height.toFixed(0));
    const points = new Map(facilities.map((f) => [f.id, projected.point(f.position)]));

    const loads = new Map();
    if (plan && plan.elephants) {
      for (const load of plan.elephants.links) loads.set(load.link_id, load);
    }
    const routeShares = new Map();
    if (route) {
      for (const r of route.routes) {
        for (const link of r.links) {
          routeShares.set(link.link_id, Math.max(routeShares.get(link.link_id) || 0, link.share));
        }
      }
    }

    const linkGroup = byId('map-links');
    const routeGroup = byId('map-route');
    linkGroup.replaceChildren();
    routeGroup.replaceChildren();
    for (const link of topology.links) {
      const from = points.get(link.src_facility_id), to = points.get(link.dst_facility_id);
      if (!from || !to) continue;
      const state = linkState(link);
      const load = loads.get(link.id);
      const utilization = load && load.capacity_gbps > 0 ? load.load_gbps / load.capacity_gbps : 0;
      const geometry = linkGeometry(from, to, 3);
      const line = svgElement('line', Object.assign({
        'class': 'link' + (state === 'up' ? ' ' + utilizationClass(utilization) : ''),
        'data-link': link.id,
        'data-state': state,
        'data-utilization': utilization.toFixed(3),
        'stroke-width': (1.5 + Math.log2(Math.max(link.capacity_gbps, 100) / 100)).toFixed(1),
      }, geometry));
      if (routeShares.has(link.id)) line.setAttribute('data-on-route', 'true');
      const title = svgElement('title');
      title.textContent = link.id + ': ' + state + ', ' + link.capacity_gbps + ' Gb/s, ' + ms(link.latency_us) +
          ' ms one way, planned elephant load ' +
          (load ? load.load_gbps.toFixed(0) + ' Gb/s (' + percent(utilization) + ')' : 'none');
      line.appendChild(title);
      linkGroup.appendChild(line);
      const share = routeShares.get(link.id);
      if (share > 0) {
        routeGroup.appendChild(svgElement('line', Object.assign({
          'class': 'route-link',
          'data-route-link': link.id,
          'data-share': share.toFixed(3),
          'stroke-width': (4 + 6 * share).toFixed(1),
        }, geometry)));
      }
    }

    const facilityGroup = byId('map-facilities');
    facilityGroup.replaceChildren();
    for (const facility of facilities) {
      const point = points.get(facility.id);
      const ends = route && (facility.id === route.src || facility.id === route.dst);
      const group = svgElement('g', { 'class': 'facility' + (ends ? ' route-end' : ''), 'data-facility': facility.id });
      group.appendChild(svgElement('circle', { cx: point.x.toFixed(1), cy: point.y.toFixed(1), r: 7 }));
      const place = labelPlacement(point, Array.from(points.values()));
      const label = svgElement('text', { x: place.x.toFixed(1), y: place.y.toFixed(1), 'text-anchor': place.anchor });
      label.textContent = facility.id;
      group.appendChild(label);
      const title = svgElement('title');
      title.textContent = facility.display_name + ' (' + facility.id + ', ' + facility.region + ')';
      group.appendChild(title);
      facilityGroup.appendChild(group);
    }
  }

  function fillSelectors(topology) {
    const ids = topology.facilities.map((f) => f.id);
    if (ids.join(',') === view.facilityIds.join(',')) return;
    view.facilityIds = ids;
    for (const [select, chosen] of [[byId('route-src'), view.src], [byId('route-dst'), view.dst]]) {
      select.replaceChildren(element('option', { value: '' }, '—'));
      for (const facility of topology.facilities) {
        select.appendChild(element('option', { value: facility.id }, facility.id + ' – ' + facility.display_name));
      }
      select.value = ids.includes(chosen) ? chosen : '';
    }
  }

  function chooseRoute() {
    view.src = byId('route-src').value;
    view.dst = byId('route-dst').value;
    const url = new URL(window.location.href);
    for (const name of ['src', 'dst']) {
      if (view[name]) url.searchParams.set(name, view[name]); else url.searchParams.delete(name);
    }
    window.history.replaceState(null, '', url);
    poll();
  }

  function routeWanted() {
    return view.src && view.dst && view.src !== view.dst &&
        view.facilityIds.includes(view.src) && view.facilityIds.includes(view.dst);
  }

  function drawRoute(route) {
    const list = byId('route-paths');
    const note = byId('route-note');
    list.replaceChildren();
    if (!route) {
      note.textContent = view.src && view.src === view.dst ? 'Source and destination are the same facility.'
                                                           : 'Choose a source and a destination.';
      return;
    }
    if (route.routes.length === 0) {
      note.textContent = 'No route from ' + route.src + ' to ' + route.dst + ' in plan ' + route.generation + '.';
      return;
    }
    // Prefixes forwarded the same way are listed together.
    const byPath = new Map();
    for (const r of route.routes) {
      const path = r.route.path_facility_ids.join('>');
      const split = r.links.map((l) => l.link_id + ' ' + percent(l.share)).join(', ');
      const key = path + '|' + split;
      if (!byPath.has(key)) byPath.set(key, { route: r.route, backups: r.backups, split: split, prefixes: [] });
      byPath.get(key).prefixes.push(r.route.prefix);
    }
    for (const entry of byPath.values()) {
      const item = element('li', { 'data-path': entry.route.path_facility_ids.join(',') });
      item.appendChild(document.createTextNode('primary path '));
      item.appendChild(element('b', {}, entry.route.path_facility_ids.join(' → ')));
      item.appendChild(document.createTextNode(', ' + ms(entry.route.path_latency_us) + ' ms one way, ' +
          entry.backups + ' backup' + (entry.backups === 1 ? '' : 's')));
      item.appendChild(element('div', { 'class': 'note' }, entry.prefixes.join(', ') + ' — traffic over ' + entry.split));
      list.appendChild(item);
    }
    note.textContent = 'Plan ' + route.generation + ': the share of the traffic on each link, as every site ' +
        'on the way forwards it (weighted next hops).';
  }

  function drawPlan(planAnswer) {
    const plan = planAnswer.plan;
    document.body.setAttribute('data-plan-generation', plan ? plan.generation : '0');
    byId('plan-generation').textContent = plan ? plan.generation : 'none yet';
    const elephants = plan && plan.elephants;
    byId('plan-mlu').textContent = elephants ? percent(elephants.max_utilization) : '–';
    byId('plan-carried').textContent = elephants
        ? elephants.carried_gbps.toFixed(0) + ' of ' + elephants.demand_gbps.toFixed(0) + ' Gb/s' : '–';
    byId('plan-pending').textContent = planAnswer.replan_pending ? 're-plan pending' : '';
    const unreachable = plan && plan.unreachable.length ? ' Unreachable: ' + plan.unreachable.join(', ') + '.' : '';
    byId('plan-reason').textContent = plan ? 'Plan ' + plan.generation + ': ' + plan.reason + '.' + unreachable : '';
  }

  // Path `index` of a chain's path table (plan.proto's ChainPlan.path_ends):
  // its facility ids; none for path 0 or an index the table does not have.
  function chainPath(chain, index) {
    const ends = chain.path_ends;
    if (!index || index >= ends.length) return [];
    return chain.path_facilities.slice(ends[index - 1], ends[index])
        .map((facility) => chain.path_facility_ids[facility] ?? '?');
  }

  function drawChains(answer) {
    const body = byId('chains').querySelector('tbody');
    body.replaceChildren();
    for (const entry of answer.chains) {
      const chain = entry.chain;
      const primary = chain.primary;
      const row = element('tr', { 'data-chain': chain.workload_id });
      row.appendChild(element('td', {}, chain.workload_id));
      const latency = element('td', {}, primary.placed
          ? ms(primary.total_latency_us) + ' / ' + ms(chain.latency_budget_us) + ' ms' : 'not placed');
      if (!primary.placed || !primary.within_budget) latency.classList.add('over-budget');
      row.appendChild(latency);
      const hops = element('td');
      if (!primary.placed) hops.textContent = primary.reason;
      primary.hops.forEach((hop, index) => {
        const slowest = index === entry.slowest_hop;
        const span = element('span', {
          'class': 'hop' + (slowest ? ' slowest' : ''),
          'data-hop': String(index + 1),
          'title': 'there ' + (chainPath(chain, hop.path_there).join('>') || 'local') + ', back ' +
              (chainPath(chain, hop.path_back).join('>') || 'local') + (slowest ? ' — the slowest hop' : ''),
        }, (index + 1) + '. ' + hop.service_id + '@' + hop.replica_facility_id + ' ' +
            ms(hop.network_rtt_us) + ' + ' + ms(hop.service_time_us));
        hops.appendChild(span);
      });
      row.appendChild(hops);
      body.appendChild(row);
    }
    if (answer.chains.length === 0) {
      const row = element('tr');
      row.appendChild(element('td', { colspan: '3', 'class': 'note' }, 'No agent chain in the plan.'));
      body.appendChild(row);
    }
  }

  function drawAudit(answer) {
    const list = byId('audit');
    list.replaceChildren();
    for (const dependency of answer.single_facility_dependencies) {
      const item = element('li', {
        'data-workload': dependency.workload_id,
        'data-facility-dependency': dependency.facility_id,
      });
      item.appendChild(element('b', {}, dependency.workload_id));
      item.appendChild(document.createTextNode(' depends on ' + dependency.facility_id + ': ' + dependency.reason));
      list.appendChild(item);
    }
    if (answer.single_facility_dependencies.length === 0) {
      list.appendChild(element('li', { 'class': 'note' }, 'No workload depends on a single facility.'));
    }
  }

  function describeEvent(event) {
    const state = (name) => (name || '').replace('OPER_STATE_', '').toLowerCase();
    if (event.health) {
      return ['health', 'link ' + event.health.link_id + ' ' + state(event.health.previous) + ' → ' +
          state(event.health.current) + (event.health.reported_by ? ' (' + event.health.reported_by + ')' : '')];
    }
    if (event.plan) {
      return ['plan', 'generation ' + event.plan.generation + ': ' + event.plan.reason + ' (' +
          event.plan.routes_changed + ' routes changed)'];
    }
    if (event.intent) {
      const intent = event.intent.intent || {};
      const kind = intent.drain ? 'drain' : intent.pin ? 'pin' : intent.metric_override ? 'metric override' : 'intent';
      return ['intent', kind + ' ' + intent.id + (event.intent.removed ? ' removed' : ' added') +
          (intent.reason ? ': ' + intent.reason : '')];
    }
    return ['other', JSON.stringify(event)];
  }

  function addEvents(answer) {
    if (BigInt(answer.latest_seq) < BigInt(view.eventsAfter)) view.events = [];  // pathcomp restarted
    for (const entry of answer.events) view.events.unshift(entry);
    view.events.length = Math.min(view.events.length, MAX_EVENTS);
    view.eventsAfter = answer.latest_seq;
    const list = byId('events');
    list.replaceChildren();
    for (const entry of view.events) {
      const [kind, text] = describeEvent(entry.event);
      const item = element('li', { 'data-seq': entry.seq, 'data-kind': kind });
      item.appendChild(element('time', {}, new Date(Number(entry.event.at_unix_ms)).toLocaleTimeString()));
      item.appendChild(element('span', { 'class': 'kind kind-' + kind }, kind));
      item.appendChild(document.createTextNode(' ' + text));
      list.appendChild(item);
    }
    if (view.events.length === 0) {
      list.appendChild(element('li', { 'class': 'note' }, 'No event since the console started.'));
    }
  }

  function setConnection(state, text) {
    const connection = byId('connection');
    connection.setAttribute('data-state', state);
    connection.textContent = text;
  }

  let pollTimer = null;
  async function poll() {
    clearTimeout(pollTimer);
    try {
      const [topology, plan, chains, audit, events] = await Promise.all([
        getJson('api/v1/topology'), getJson('api/v1/plan'), getJson('api/v1/chains'),
        getJson('api/v1/audit'), getJson('api/v1/events?after=' + view.eventsAfter)]);
      fillSelectors(topology);
      const route = routeWanted()
          ? await getJson('api/v1/route?src=' + encodeURIComponent(view.src) + '&dst=' + encodeURIComponent(view.dst))
          : null;
      drawPlan(plan);
      drawMap(topology, plan.plan, route);
      drawRoute(route);
      drawChains(chains);
      drawAudit(audit);
      addEvents(events);
      setConnection('ok', 'updated ' + new Date().toLocaleTimeString());
    } catch (error) {
      setConnection('error', 'not updated: ' + error.message);
      console.error('console not updated:', error);
    }
    pollTimer = setTimeout(poll, POLL_MS);
  }

  byId('route-src').addEventListener('change', chooseRoute);
  byId('route-dst').addEventListener('change', chooseRoute);
  poll();
})();
