// The tuning file's JSON (nlohmann, private to the library) and the tables' compact choices.
#include "coll/tuning_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "coll/algorithm_registry.hpp"

namespace cachecomm::detail {

namespace {

using json = nlohmann::ordered_json;

constexpr std::array<std::string_view, tuned_op_count> op_names = {
    "barrier", "bcast",    "reduce",     "allreduce", "allgather", "gather",
    "scatter", "alltoall", "allgatherv", "alltoallv", "gatherv"};

template <typename Entry>
std::int8_t id_in(std::span<const Entry> registry, std::string_view name) {
  for (const Entry& entry : registry) {
    if (entry.name == name) return static_cast<std::int8_t>(entry.id);
  }
  return tuning_choices::none;
}

template <typename Entry>
std::string_view name_in(std::span<const Entry> registry, std::int8_t id) {
  const auto index = static_cast<std::size_t>(id) - 1;
  return id > 0 && index < registry.size() ? registry[index].name : std::string_view("?");
}

const json& field(const json& object, const char* name, const std::string& where) {
  if (!object.is_object() || !object.contains(name)) {
    throw tuning_file_error(where + ": missing field '" + name + "'");
  }
  return object.at(name);
}

std::string text_field(const json& object, const char* name, const std::string& where) {
  const json& value = field(object, name, where);
  if (!value.is_string()) throw tuning_file_error(where + ": '" + name + "' must be a string");
  return value.get<std::string>();
}

long long integer_field(const json& object, const char* name, const std::string& where) {
  const json& value = field(object, name, where);
  if (!value.is_number_integer() || value.get<long long>() < 0) {
    throw tuning_file_error(where + ": '" + name + "' must be a non-negative integer");
  }
  return value.get<long long>();
}

std::vector<std::pair<std::string, double>> times_of(const json& entry, const char* name,
                                                     const std::string& where) {
  std::vector<std::pair<std::string, double>> times;
  if (!entry.contains(name)) return times;
  const json& object = entry.at(name);
  if (!object.is_object()) throw tuning_file_error(where + ": '" + name + "' must be an object");
  for (const auto& [candidate, value] : object.items()) {
    if (!value.is_number()) {
      std::string message = where;
      message.append(": '").append(name).append(".").append(candidate).append("' must be a number");
      throw tuning_file_error(message);
    }
    times.emplace_back(candidate, value.get<double>());
  }
  return times;
}

tuning_table table_of(const json& document, std::size_t index) {
  const std::string where = "tables[" + std::to_string(index) + "]";
  tuning_table table;
  const json& key = field(document, "key", where);
  const std::string key_where = where + ".key";
  table.key.cpu_model = text_field(key, "cpu_model", key_where);
  table.key.cores = static_cast<int>(integer_field(key, "cores", key_where));
  table.key.caches = text_field(key, "caches", key_where);
  table.key.ranks_per_node = static_cast<int>(integer_field(key, "ranks_per_node", key_where));
  const json& oversubscribed = field(key, "oversubscribed", key_where);
  if (!oversubscribed.is_boolean()) {
    throw tuning_file_error(key_where + ": 'oversubscribed' must be true or false");
  }
  table.key.oversubscribed = oversubscribed.get<bool>();
  table.key.mpi_library = text_field(key, "mpi_library", key_where);
  if (document.contains("created") && document.at("created").is_string())
    table.created = document.at("created").get<std::string>();
  const json& operations = field(document, "operations", where);
  for (std::size_t op = 0; op < tuned_op_count; ++op) {
    const std::string name(op_names[op]);
    std::string op_where = where;
    op_where.append(".operations.").append(name);
    if (op >= required_tuned_op_count &&
        (!operations.is_object() || !operations.contains(name) ||
         (operations.at(name).is_array() && operations.at(name).empty())))
      continue;  // not tuned: the built-in rules decide
    const json& rows = field(operations, name.c_str(), where + ".operations");
    if (!rows.is_array() || rows.empty()) {
      throw tuning_file_error(op_where + ": no measured sizes (a partial tuning run?)");
    }
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const std::string row_where = op_where + "[" + std::to_string(i) + "]";
      tuning_entry entry;
      entry.bytes = static_cast<std::size_t>(integer_field(rows[i], "bytes", row_where));
      entry.choice = text_field(rows[i], "choice", row_where);
      (void)choice_id(static_cast<tuned_op>(op), entry.choice);  // throws for unknown names
      entry.hot_us = times_of(rows[i], "hot_us", row_where);
      entry.cold_us = times_of(rows[i], "cold_us", row_where);
      table.entries[op].push_back(std::move(entry));
    }
    std::sort(table.entries[op].begin(), table.entries[op].end(),
              [](const tuning_entry& a, const tuning_entry& b) { return a.bytes < b.bytes; });
  }
  return table;
}

json times_json(const std::vector<std::pair<std::string, double>>& times) {
  json object = json::object();
  // Nanosecond resolution: the file stays readable and the digits beyond are noise.
  for (const auto& [candidate, microseconds] : times)
    object[candidate] = std::round(microseconds * 1000.0) / 1000.0;
  return object;
}

}  // namespace

std::string_view to_string(tuned_op op) {
  return op_names[static_cast<std::size_t>(op)];
}

std::string tuning_key::differences(const tuning_key& other) const {
  std::string text;
  auto add = [&text](const char* name, const std::string& mine, const std::string& theirs) {
    if (mine == theirs) return;
    text +=
        (text.empty() ? "" : ", ") + std::string(name) + " '" + mine + "' (file: '" + theirs + "')";
  };
  add("cpu_model", cpu_model, other.cpu_model);
  add("cores", std::to_string(cores), std::to_string(other.cores));
  add("caches", caches, other.caches);
  add("ranks_per_node", std::to_string(ranks_per_node), std::to_string(other.ranks_per_node));
  add("oversubscribed", oversubscribed ? "true" : "false", other.oversubscribed ? "true" : "false");
  add("mpi_library", mpi_library, other.mpi_library);
  return text;
}

std::int8_t choice_id(tuned_op op, std::string_view name) {
  if (name == "mpi") return tuning_choices::system_mpi;
  std::int8_t id = tuning_choices::none;
  switch (op) {
    case tuned_op::barrier: id = id_in(barrier_registry(), name); break;
    case tuned_op::broadcast: id = id_in(broadcast_registry(), name); break;
    case tuned_op::reduce:
    case tuned_op::allreduce: id = id_in(reduce_registry(), name); break;
    case tuned_op::allgather: id = id_in(allgather_registry(), name); break;
    case tuned_op::gather: id = id_in(gather_registry(), name); break;
    case tuned_op::scatter: id = id_in(scatter_registry(), name); break;
    case tuned_op::alltoall: id = id_in(alltoall_registry(), name); break;
    case tuned_op::allgatherv: id = id_in(allgatherv_registry(), name); break;
    case tuned_op::alltoallv: id = id_in(alltoallv_registry(), name); break;
    case tuned_op::gatherv: id = id_in(gatherv_registry(), name); break;
  }
  if (id == tuning_choices::none) {
    throw tuning_file_error("unknown " + std::string(to_string(op)) + " algorithm '" +
                            std::string(name) + "'");
  }
  return id;
}

std::string_view choice_name(tuned_op op, std::int8_t id) {
  if (id == tuning_choices::system_mpi) return "mpi";
  switch (op) {
    case tuned_op::barrier: return name_in(barrier_registry(), id);
    case tuned_op::broadcast: return name_in(broadcast_registry(), id);
    case tuned_op::reduce:
    case tuned_op::allreduce: return name_in(reduce_registry(), id);
    case tuned_op::allgather: return name_in(allgather_registry(), id);
    case tuned_op::gather: return name_in(gather_registry(), id);
    case tuned_op::scatter: return name_in(scatter_registry(), id);
    case tuned_op::alltoall: return name_in(alltoall_registry(), id);
    case tuned_op::allgatherv: return name_in(allgatherv_registry(), id);
    case tuned_op::alltoallv: return name_in(alltoallv_registry(), id);
    case tuned_op::gatherv: return name_in(gatherv_registry(), id);
  }
  return "?";
}

std::vector<tuning_table> parse_tuning_file(std::string_view text) {
  json document;
  try {
    document = json::parse(text);
  } catch (const json::exception& failure) {
    throw tuning_file_error(std::string("not JSON: ") + failure.what());
  }
  const long long format = integer_field(document, "format", "file");
  if (format != tuning_file_format) {
    throw tuning_file_error("format " + std::to_string(format) + " (this cachecomm reads " +
                            std::to_string(tuning_file_format) + ")");
  }
  const json& tables = field(document, "tables", "file");
  if (!tables.is_array() || tables.empty()) throw tuning_file_error("file: no tables");
  std::vector<tuning_table> result;
  for (std::size_t i = 0; i < tables.size(); ++i) result.push_back(table_of(tables[i], i));
  return result;
}

std::string tuning_file_text(const std::vector<tuning_table>& tables) {
  json document;
  document["format"] = tuning_file_format;
  document["generator"] = "cachecomm-tune";
  document["about"] =
      "choice: the candidate whose worse ratio to the fastest (hot and cold buffers) is smallest; "
      "*_us: per-call medians in microseconds, measured in the same run";
  document["tables"] = json::array();
  for (const tuning_table& table : tables) {
    json item;
    item["key"] = {{"cpu_model", table.key.cpu_model},
                   {"cores", table.key.cores},
                   {"caches", table.key.caches},
                   {"ranks_per_node", table.key.ranks_per_node},
                   {"oversubscribed", table.key.oversubscribed},
                   {"mpi_library", table.key.mpi_library}};
    item["created"] = table.created;
    json operations = json::object();
    for (std::size_t op = 0; op < tuned_op_count; ++op) {
      if (op >= required_tuned_op_count && table.entries[op].empty()) continue;  // not tuned
      json rows = json::array();
      for (const tuning_entry& entry : table.entries[op]) {
        json row = {{"bytes", entry.bytes}, {"choice", entry.choice}};
        if (!entry.hot_us.empty()) row["hot_us"] = times_json(entry.hot_us);
        if (!entry.cold_us.empty()) row["cold_us"] = times_json(entry.cold_us);
        rows.push_back(std::move(row));
      }
      operations[std::string(op_names[op])] = std::move(rows);
    }
    item["operations"] = std::move(operations);
    document["tables"].push_back(std::move(item));
  }
  return document.dump(2) + "\n";
}

const tuning_table* matching_table(const std::vector<tuning_table>& tables, const tuning_key& key,
                                   std::string& why_not) {
  why_not.clear();
  for (const tuning_table& table : tables) {
    if (table.key == key) return &table;
  }
  // Name the differences from the table that shares the most (the one most likely meant).
  std::size_t fewest = ~std::size_t{0};
  for (const tuning_table& table : tables) {
    const std::string differences = key.differences(table.key);
    const auto count =
        static_cast<std::size_t>(std::count(differences.begin(), differences.end(), '('));
    if (count < fewest) {
      fewest = count;
      why_not = differences;
    }
  }
  return nullptr;
}

tuning_choices choices_of(const tuning_table& table) {
  tuning_choices choices;
  for (std::size_t op = 0; op < tuned_op_count; ++op) {
    const auto& entries = table.entries[op];
    if (entries.empty()) continue;
    for (std::size_t bucket = 0; bucket < tuning_choices::buckets; ++bucket) {
      // Distance in powers of two between the bucket and each measured size's bucket.
      const tuning_entry* nearest = nullptr;
      std::size_t best = ~std::size_t{0};
      for (const tuning_entry& entry : entries) {
        const std::size_t measured = tuning_choices::bucket_of(entry.bytes);
        const std::size_t distance = measured > bucket ? measured - bucket : bucket - measured;
        if (distance < best) {
          best = distance;
          nearest = &entry;
        }
      }
      choices.choice[op][bucket] = choice_id(static_cast<tuned_op>(op), nearest->choice);
    }
  }
  return choices;
}

}  // namespace cachecomm::detail
