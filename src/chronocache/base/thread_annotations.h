// Clang -Wthread-safety annotations; they document lock discipline and expand to nothing elsewhere.
// The clang-thread-safety preset (`make build-thread-safety`, part of `make test`) compiles every
// target that takes a lock with the analysis as an error, so an annotation here is checked, not
// decoration. Locks are chronocache::Mutex (base/mutex.h): std::mutex carries no annotations in
// libstdc++, so the analysis cannot see it being taken.
//
//   class Queue {
//     void push(int v) CC_EXCLUDES(mu_) { MutexLock lock(mu_); items_.push_back(v); }
//     void push_locked(int v) CC_REQUIRES(mu_);   // the caller holds mu_
//     Mutex mu_;
//     std::vector<int> items_ CC_GUARDED_BY(mu_);
//   };
#pragma once

#if defined(__clang__)
#define CC_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define CC_THREAD_ANNOTATION(x)
#endif

// On a lock type: it is a capability named `name` in diagnostics ("mutex").
#define CC_CAPABILITY(name) CC_THREAD_ANNOTATION(capability(name))
// On an RAII lock type: construction acquires, destruction releases.
#define CC_SCOPED_CAPABILITY CC_THREAD_ANNOTATION(scoped_lockable)

// On a member: read or written only while `mu` is held.
#define CC_GUARDED_BY(mu) CC_THREAD_ANNOTATION(guarded_by(mu))
// On a pointer member: the pointee is read or written only while `mu` is held.
#define CC_PT_GUARDED_BY(mu) CC_THREAD_ANNOTATION(pt_guarded_by(mu))
// On a lock member: when both are taken, this one is taken before (after) the others.
#define CC_ACQUIRED_BEFORE(...) CC_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define CC_ACQUIRED_AFTER(...) CC_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))

// On a function: the caller must hold the locks (REQUIRES) or must not (EXCLUDES: the function
// takes them itself, so holding one would deadlock).
#define CC_REQUIRES(...) CC_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define CC_EXCLUDES(...) CC_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
// On a function: it takes (ACQUIRE) or lets go of (RELEASE) the locks, or `this` when none given.
#define CC_ACQUIRE(...) CC_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define CC_RELEASE(...) CC_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define CC_TRY_ACQUIRE(...) CC_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
// The same for a shared hold (a reader-writer lock's read side): guarded data may be read, not
// written, while it is held.
#define CC_REQUIRES_SHARED(...) CC_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
#define CC_ACQUIRE_SHARED(...) CC_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define CC_RELEASE_SHARED(...) CC_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define CC_TRY_ACQUIRE_SHARED(...) CC_THREAD_ANNOTATION(try_acquire_shared_capability(__VA_ARGS__))
// On a function: it checks at run time that the lock is held and aborts otherwise.
#define CC_ASSERT_CAPABILITY(x) CC_THREAD_ANNOTATION(assert_capability(x))
// On a function returning a lock by reference: the lock it returns.
#define CC_RETURN_CAPABILITY(x) CC_THREAD_ANNOTATION(lock_returned(x))

// For the rare function the analysis cannot follow (several locks taken in a loop, or state
// handed between threads by a protocol rather than a lock); say why beside each use.
#define CC_NO_THREAD_SAFETY_ANALYSIS CC_THREAD_ANNOTATION(no_thread_safety_analysis)
