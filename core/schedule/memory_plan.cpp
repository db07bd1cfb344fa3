// The memory plan (tinygrad's schedule/memory.py): an intermediate whose last reader has run
// frees its memory for a later intermediate of the same device and byte size. The queue runs
// items in order, so reuse needs no synchronization.
#include <algorithm>

#include "schedule_build.hpp"

namespace tg::sched {

void plan_memory(ScheduleBuild& b) {
  ScheduleTemplate& t = b.tmpl;
  const std::vector<BufferSpec>& unplanned = b.unplanned;
  std::vector<int64_t> last_use(unplanned.size(), -1), first_def(unplanned.size(), -1);
  for (size_t i = 0; i < t.items.size(); ++i)
    for (size_t s = 0; s < t.items[i].bufs.size(); ++s) {
      const BufRef& r = t.items[i].bufs[s];
      if (r.kind != BufRef::Kind::Temp) continue;
      last_use[static_cast<size_t>(r.index)] = static_cast<int64_t>(i);
      if (s == 0 && first_def[static_cast<size_t>(r.index)] < 0)
        first_def[static_cast<size_t>(r.index)] = static_cast<int64_t>(i);
    }
  std::vector<int64_t> planned(unplanned.size(), -1);
  std::vector<int64_t> free_slots;
  for (size_t i = 0; i < t.items.size(); ++i) {
    for (size_t k = 0; k < unplanned.size(); ++k) {
      if (first_def[k] != static_cast<int64_t>(i)) continue;
      const BufferSpec& want = unplanned[k];
      auto fit = std::find_if(free_slots.begin(), free_slots.end(), [&](int64_t s) {
        const BufferSpec& have = t.temps[static_cast<size_t>(s)];
        return have.device == want.device &&
               have.size * have.dtype.itemsize() == want.size * want.dtype.itemsize();
      });
      if (fit != free_slots.end()) {
        planned[k] = *fit;
        free_slots.erase(fit);
        ++t.reused;
      } else {
        planned[k] = static_cast<int64_t>(t.temps.size());
        t.temps.push_back(want);
      }
    }
    for (size_t k = 0; k < unplanned.size(); ++k)
      if (last_use[k] == static_cast<int64_t>(i)) free_slots.push_back(planned[k]);
  }
  t.temporaries = static_cast<int64_t>(unplanned.size());
  for (TemplateItem& item : t.items)
    for (BufRef& r : item.bufs)
      if (r.kind == BufRef::Kind::Temp) r.index = planned[static_cast<size_t>(r.index)];
}

} // namespace tg::sched
