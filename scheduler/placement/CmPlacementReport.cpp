#include "scheduler/placement/CmPlacementReport.h"

#include "support/FiniteJson.h"
#include "support/Format.h"
#include "support/Svg.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <map>
#include <sstream>

namespace dfl {
namespace {

std::string tileName(const Network &net, const CmPartitioning &p, int t) {
  if (t == CmEdge::kGcuInput)
    return "gcu.input";
  if (t == CmEdge::kGcuOutput)
    return "gcu.output";
  const CmTile &tile = p.tiles[static_cast<size_t>(t)];
  const CmPartition &part = p.partitions[static_cast<size_t>(tile.partition)];
  std::string name = net.layers[static_cast<size_t>(part.layers.front())].name;
  if (part.tiles() > 1)
    name += "[" + std::to_string(tile.rowBlock) + "," + std::to_string(tile.colBlock) + "]";
  return name;
}

} // namespace

Evaluation evaluationOf(const Network &net, const CmHardware &hw, const CmMapping &m) {
  Evaluation e = evaluationHeader(net, hw, "partition");
  const double images = static_cast<double>(net.batch);
  double mvmPj = 0;
  for (const CmPartition &part : m.partitioning.partitions) {
    // A DPU-only partition has no crossbar: no MxV.
    const double pj = part.crossbarLayer < 0 ? 0
                                             : images * static_cast<double>(part.vectors * part.tiles()) * hw.mvmEnergyPj;
    e.rows.push_back({net.layers[static_cast<size_t>(part.layers.front())].name, pj, std::nullopt, {{"MxV", pj}}, {}});
    mvmPj += pj;
  }
  const double hopsPj = images * static_cast<double>(m.placement.trafficHops) * hw.hopEnergyPj;
  e.parts = {{"MxV", mvmPj}, {"interconnect", hopsPj}};
  e.energyPj = mvmPj + hopsPj;
  return e;
}

std::string cmPlacementJson(const Network &net, const CmHardware &hw, const CmMapping &m) {
  const CmPartitioning &p = m.partitioning;
  const CmPlacement &pl = m.placement;
  nlohmann::ordered_json parts = nlohmann::ordered_json::array();
  for (const CmPartition &part : p.partitions) {
    nlohmann::ordered_json layers = nlohmann::ordered_json::array(), tiles = nlohmann::ordered_json::array();
    for (int l : part.layers)
      layers.push_back(net.layers[static_cast<size_t>(l)].name);
    for (int64_t t = 0; t < part.tiles(); ++t) {
      const CmTile &tile = p.tiles[static_cast<size_t>(part.firstTile + t)];
      tiles.push_back({{"name", tileName(net, p, part.firstTile + static_cast<int>(t))},
                       {"rows", {tile.rowBegin, tile.rowEnd}},
                       {"columns", {tile.colBegin, tile.colEnd}},
                       {"core", pl.core[static_cast<size_t>(part.firstTile + t)]}});
    }
    parts.push_back({{"crossbar_layer", part.crossbarLayer < 0 ? nlohmann::ordered_json()
                                                               : nlohmann::ordered_json(net.layers[static_cast<size_t>(part.crossbarLayer)].name)},
                     {"layers", layers},
                     {"dpu_ops", part.dpuOps},
                     {"matrix", {part.rows, part.cols}},
                     {"tiles_grid", {part.rowTiles, part.colTiles}},
                     {"mvms_per_image", part.vectors},
                     {"tiles", tiles}});
  }
  nlohmann::ordered_json edges = nlohmann::ordered_json::array();
  for (const CmEdge &e : p.edges)
    edges.push_back({{"from", tileName(net, p, e.from)},
                     {"to", tileName(net, p, e.to)},
                     {"kind", e.partialSums ? "partial_sums" : "activations"},
                     {"words_per_image", e.words}});
  nlohmann::ordered_json out = {
      {"network", net.name},
      {"hardware", hw.name},
      {"batch", net.batch},
      {"crossbar", {hw.xbarRows, hw.xbarCols}},
      {"cores", hw.cores},
      {"cores_used", p.tiles.size()},
      {"topology", cmTopologyName(hw.topology)},
      {"placement",
       {{"objective", cmObjectiveName(m.objective)},
        {"status", cmPlacementStatusName(pl.status)},
        {"cost", pl.cost},
        {"lower_bound", pl.lowerBound},
        {"gap", pl.gap()},
        {"traffic_word_hops_per_image", pl.trafficHops},
        {"longest_route_hops", pl.longestRoute},
        {"nodes", pl.nodes},
        {"failures", pl.failures},
        {"search", pl.greedy ? "greedy" : pl.timeLimitHit ? "time-limit" : "branch-and-bound"},
        {"model_entries", pl.modelEntries},
        {"node_limit", pl.nodeLimit}}},
      {"partitions", parts},
      {"edges", edges}};
  return dumpReport(out);
}

std::string cmPlacementSvg(const Network &net, const CmHardware &hw, const CmMapping &m) {
  const CmPartitioning &p = m.partitioning;
  const CmPlacement &pl = m.placement;
  const int64_t cols = hw.gridCols(), rows = (hw.cores + cols - 1) / cols;
  const double cell = 120, pad = 70, width = static_cast<double>(cols) * cell + 2 * pad,
               height = static_cast<double>(rows) * cell + 2 * pad + 60;
  std::vector<int> tileOn(static_cast<size_t>(hw.cores), -1);
  for (size_t t = 0; t < pl.core.size(); ++t)
    tileOn[static_cast<size_t>(pl.core[t])] = static_cast<int>(t);
  auto centre = [&](int core) {
    auto [r, c] = hw.gridOf(core);
    return std::pair{pad + (static_cast<double>(c) + 0.5) * cell, pad + 40 + (static_cast<double>(r) + 0.5) * cell};
  };
  // A partition's colour: evenly spaced hues in partition order, so the
  // pipeline reads as a rainbow from input to output.
  auto hue = [&](int partition) {
    return static_cast<int>(300.0 * partition / std::max<size_t>(1, p.partitions.size() - 1));
  };
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" font-family=\"sans-serif\">\n"
    << "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"5\" markerHeight=\"5\" "
       "orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#333\"/></marker></defs>\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"" << pad << "\" y=\"30\" font-size=\"18\">" << svg::escape(net.name) << " on " << svg::escape(hw.name) << ": "
    << p.partitions.size() << " partitions, " << p.tiles.size() << " of " << hw.cores << " cores, "
    << pl.trafficHops << " word-hops per image (" << cmPlacementStatusName(pl.status)
    << (pl.status == CmPlacement::Status::Feasible ? ", gap " + formatTrimmed(100 * pl.gap(), 1) + "%" : "")
    << ")</text>\n";
  // The interconnect's links, light.
  for (auto [a, b] : hw.links) {
    auto [x1, y1] = centre(a);
    auto [x2, y2] = centre(b);
    s << "<line x1=\"" << x1 << "\" y1=\"" << y1 << "\" x2=\"" << x2 << "\" y2=\"" << y2
      << "\" stroke=\"#ddd\" stroke-width=\"6\"/>\n";
  }
  // The cores: a placed tile is filled with its partition's colour; its
  // labels go on top of the edges, with a white halo.
  std::ostringstream labels;
  const char *halo = " paint-order=\"stroke\" stroke=\"white\" stroke-width=\"3\"";
  for (int c = 0; c < hw.cores; ++c) {
    auto [x, y] = centre(c);
    int t = tileOn[static_cast<size_t>(c)];
    s << "<rect x=\"" << x - cell * 0.4 << "\" y=\"" << y - cell * 0.4 << "\" width=\"" << cell * 0.8 << "\" height=\""
      << cell * 0.8 << "\" rx=\"6\" fill=\""
      << (t < 0 ? std::string("#f4f4f4") : "hsl(" + std::to_string(hue(p.tiles[static_cast<size_t>(t)].partition)) + ",70%,80%)")
      << "\" stroke=\"#888\"/>\n";
    s << "<text x=\"" << x - cell * 0.37 << "\" y=\"" << y - cell * 0.27 << "\" font-size=\"10\" fill=\"#666\">core "
      << c << "</text>\n";
    if (t >= 0) {
      const CmTile &tile = p.tiles[static_cast<size_t>(t)];
      const CmPartition &part = p.partitions[static_cast<size_t>(tile.partition)];
      std::string name = net.layers[static_cast<size_t>(part.layers.front())].name;
      labels << "<text x=\"" << x << "\" y=\"" << y << "\" font-size=\"10\" text-anchor=\"middle\"" << halo << ">"
             << svg::escape(name.size() > 18 ? name.substr(0, 17) + "…" : name) << "</text>\n";
      if (part.tiles() > 1)
        labels << "<text x=\"" << x << "\" y=\"" << y + 13 << "\" font-size=\"10\" text-anchor=\"middle\"" << halo
               << ">tile " << tile.rowBlock << "," << tile.colBlock << "</text>\n";
    }
  }
  // The GCU's ports.
  for (auto [core, label] : {std::pair{hw.inputCore, "in"}, std::pair{hw.outputCore, "out"}}) {
    auto [x, y] = centre(core);
    s << "<text x=\"" << x + cell * 0.37 << "\" y=\"" << y + cell * 0.36 << "\" font-size=\"11\" text-anchor=\"end\" "
      << "font-weight=\"bold\" fill=\"#a00\">GCU " << label << "</text>\n";
  }
  // The partition graph: an arrow per edge between cores, width by words;
  // partial sums dashed.
  int64_t most = 1;
  for (const CmEdge &e : p.edges)
    most = std::max(most, e.words);
  for (const CmEdge &e : p.edges) {
    if (e.from < 0 || e.to < 0)
      continue;
    auto [x1, y1] = centre(pl.core[static_cast<size_t>(e.from)]);
    auto [x2, y2] = centre(pl.core[static_cast<size_t>(e.to)]);
    // Stop short of the boxes; bend a little so opposite edges stay apart.
    double dx = x2 - x1, dy = y2 - y1, len = std::max(1.0, std::hypot(dx, dy));
    double sx = x1 + dx / len * cell * 0.3, sy = y1 + dy / len * cell * 0.3;
    double ex = x2 - dx / len * cell * 0.3, ey = y2 - dy / len * cell * 0.3;
    double mx = (sx + ex) / 2 - dy / len * 12, my = (sy + ey) / 2 + dx / len * 12;
    double w = 1 + 4 * std::sqrt(static_cast<double>(e.words) / static_cast<double>(most));
    s << "<path d=\"M" << sx << "," << sy << " Q" << mx << "," << my << " " << ex << "," << ey
      << "\" fill=\"none\" stroke=\"" << (e.partialSums ? "#c60" : "#333") << "\" stroke-width=\"" << w << "\""
      << (e.partialSums ? " stroke-dasharray=\"6,3\"" : "") << " marker-end=\"url(#arrow)\" opacity=\"0.75\"><title>"
      << svg::escape(tileName(net, p, e.from)) << " -> " << svg::escape(tileName(net, p, e.to)) << ": " << e.words
      << " words per image</title></path>\n";
  }
  s << labels.str();
  s << "<text x=\"" << pad << "\" y=\"" << height - 20 << "\" font-size=\"12\" fill=\"#555\">"
    << "arrows: data per image between cores (width ~ words); dashed orange: partial sums to the reducing tile; "
       "grey bars: interconnect links</text>\n";
  s << "</svg>\n";
  return s.str();
}

std::string cmPlacementText(const Network &net, const CmHardware &hw, const CmMapping &m) {
  const CmPlacement &pl = m.placement;
  size_t tiled = 0;
  for (const CmPartition &part : m.partitioning.partitions)
    tiled += part.tiles() > 1;
  std::ostringstream s;
  s << net.name << " on " << hw.name << ": " << m.partitioning.partitions.size() << " partitions (" << tiled
    << " tiled), " << m.partitioning.tiles.size() << " of " << hw.cores << " cores\n"
    << "placement (" << cmObjectiveName(m.objective) << "): " << cmPlacementStatusName(pl.status) << ", cost "
    << pl.cost << ", lower bound " << pl.lowerBound;
  if (pl.status == CmPlacement::Status::Feasible)
    s << ", gap " << formatTrimmed(100 * pl.gap(), 2) << "%";
  s << "; " << pl.trafficHops << " word-hops per image, longest route " << pl.longestRoute << " hops; ";
  if (pl.greedy)   // docs/cm.md, "Bounds"
    s << "greedy: the exact model's " << pl.modelEntries << " table entries are above its bound\n";
  else
    s << pl.nodes << " nodes, " << pl.failures << " failures" << (pl.timeLimitHit ? " (stopped by --time-limit)" : "")
      << "\n";
  s << evaluationSummary(evaluationOf(net, hw, m)) << "\n";
  return s.str();
}

} // namespace dfl
