#include "lsp/BackgroundTasks.h"

#include <algorithm>

namespace dfl::lsp {

void BackgroundTasks::start(std::function<void()> task) {
  if (!background_)
    return task();
  auto finished = std::make_shared<std::atomic<bool>>(false);
  std::lock_guard<std::mutex> lock(shared_->mutex);
  if (abandoned_)
    return;
  for (auto it = tasks_.begin(); it != tasks_.end();)
    if (*it->finished) {
      it->thread.join();
      it = tasks_.erase(it);
    } else {
      ++it;
    }
  tasks_.push_back({std::thread([task = std::move(task), finished, shared = shared_]() mutable {
                      task();
                      task = nullptr;   // what it holds goes before the waiters wake
                      {
                        std::lock_guard<std::mutex> lock(shared->mutex);
                        *finished = true;
                      }
                      shared->finished.notify_all();
                    }),
                    finished});
}

void BackgroundTasks::joinAll() {
  std::vector<Task> running;
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    running.swap(tasks_);
  }
  for (Task &t : running)
    t.thread.join();
}

bool BackgroundTasks::waitFinished(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(shared_->mutex);
  return shared_->finished.wait_for(lock, timeout, [&] {
    return std::all_of(tasks_.begin(), tasks_.end(), [](const Task &t) { return bool(*t.finished); });
  });
}

void BackgroundTasks::abandon() {
  std::vector<Task> running;
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    abandoned_ = true;
    running.swap(tasks_);
  }
  for (Task &t : running)
    if (*t.finished)
      t.thread.join();
    else
      t.thread.detach();
}

} // namespace dfl::lsp
