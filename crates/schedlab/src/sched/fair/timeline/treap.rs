//! The long timeline: a treap over its own nodes, each subtree knowing its least vruntime
//! (the kernel's `min_vruntime_cb` augmentation), so that every operation is O(log n).
//!
//! Simplified: a treap stands for the kernel's red-black tree, its priorities a fixed hash of
//! the entity's index, so the shape is deterministic. Only the shape differs from the
//! kernel's: the order, the leftmost entity and every search are the same.

use super::{lt, min_vruntime, Entry, NIL};
use crate::sched::fair::SeId;

/// The treap priority of entity `id` (murmur3's 32-bit finalizer: a bijection, so no ties).
fn prio(id: SeId) -> u32 {
    let mut h = id;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// `se->run_node` with `se->min_vruntime`: a queued entity's place in the treap.
#[derive(Debug, Clone, Copy)]
struct Node {
    e: Entry,
    /// The least vruntime of the subtree rooted here.
    min_vruntime: u64,
    left: u32,
    right: u32,
    /// The parent node; the next free slot while the node is free.
    parent: u32,
    prio: u32,
}

/// The nodes, the root and the leftmost (`struct rb_root_cached`).
#[derive(Debug, Clone)]
pub(super) struct Treap {
    nodes: Vec<Node>,
    root: u32,
    leftmost: u32,
    /// The first free slot in `nodes`.
    free: u32,
    len: usize,
}

impl Default for Treap {
    fn default() -> Treap {
        Treap {
            nodes: Vec::new(),
            root: NIL,
            leftmost: NIL,
            free: NIL,
            len: 0,
        }
    }
}

impl Treap {
    fn n(&self, n: u32) -> &Node {
        &self.nodes[n as usize]
    }

    fn n_mut(&mut self, n: u32) -> &mut Node {
        &mut self.nodes[n as usize]
    }

    /// The entity at node `n`, none for NIL.
    fn se_of(&self, n: u32) -> Option<SeId> {
        (n != NIL).then(|| self.n(n).e.se)
    }

    /// `__pick_first_entity`.
    pub fn first(&self) -> Option<SeId> {
        self.se_of(self.leftmost)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// The least vruntime of the subtree at `n`: its own and its children's minima.
    fn subtree_min(&self, n: u32) -> u64 {
        let Node { e, left, right, .. } = *self.n(n);
        [left, right]
            .into_iter()
            .filter(|&c| c != NIL)
            .fold(e.vruntime, |m, c| min_vruntime(m, self.n(c).min_vruntime))
    }

    /// `min_vruntime_update`: the subtree's least vruntime kept at `n`.
    fn pull(&mut self, n: u32) -> u64 {
        let m = self.subtree_min(n);
        self.n_mut(n).min_vruntime = m;
        m
    }

    fn set_left(&mut self, n: u32, child: u32) {
        self.n_mut(n).left = child;
        if child != NIL {
            self.n_mut(child).parent = n;
        }
    }

    fn set_right(&mut self, n: u32, child: u32) {
        self.n_mut(n).right = child;
        if child != NIL {
            self.n_mut(child).parent = n;
        }
    }

    /// The subtree `t` cut into the nodes with keys ≤ `k` and those with keys > `k`.
    fn split(&mut self, t: u32, k: u64) -> (u32, u32) {
        if t == NIL {
            return (NIL, NIL);
        }
        let node = *self.n(t);
        if lt(k, node.e.key) {
            let (l, r) = self.split(node.left, k);
            self.set_left(t, r);
            self.pull(t);
            (l, t)
        } else {
            let (l, r) = self.split(node.right, k);
            self.set_right(t, l);
            self.pull(t);
            (t, r)
        }
    }

    /// The subtrees `a` and `b` joined, every node of `a` before every node of `b`.
    fn merge(&mut self, a: u32, b: u32) -> u32 {
        if a == NIL || b == NIL {
            return if a == NIL { b } else { a };
        }
        if self.n(a).prio > self.n(b).prio {
            let m = self.merge(self.n(a).right, b);
            self.set_right(a, m);
            self.pull(a);
            a
        } else {
            let m = self.merge(a, self.n(b).left);
            self.set_left(b, m);
            self.pull(b);
            b
        }
    }

    /// The leftmost node of the subtree `t` (not empty).
    fn leftmost_of(&self, mut t: u32) -> u32 {
        while self.n(t).left != NIL {
            t = self.n(t).left;
        }
        t
    }

    /// Put `child` where `old` hung from `parent` (the root when `parent` is NIL).
    fn replace_child(&mut self, parent: u32, old: u32, child: u32) {
        if parent == NIL {
            self.root = child;
            if child != NIL {
                self.n_mut(child).parent = NIL;
            }
        } else if self.n(parent).left == old {
            self.set_left(parent, child);
        } else {
            self.set_right(parent, child);
        }
    }

    /// A free slot holding `node`.
    fn alloc(&mut self, node: Node) -> u32 {
        if self.free == NIL {
            self.nodes.push(node);
            return self.nodes.len() as u32 - 1;
        }
        let n = self.free;
        self.free = self.n(n).parent;
        *self.n_mut(n) = node;
        n
    }

    /// `rb_add_augmented_cached`: `e` goes after the entries with a key equal to its own;
    /// its node.
    pub fn insert(&mut self, e: Entry) -> u32 {
        let p = prio(e.se);
        let (mut parent, mut at) = (NIL, self.root);
        while at != NIL && self.n(at).prio > p {
            parent = at;
            let node = self.n(at);
            at = if lt(e.key, node.e.key) {
                node.left
            } else {
                node.right
            };
        }
        let (l, r) = self.split(at, e.key);
        let n = self.alloc(Node {
            e,
            min_vruntime: e.vruntime,
            left: NIL,
            right: NIL,
            parent: NIL,
            prio: p,
        });
        self.set_left(n, l);
        self.set_right(n, r);
        let m = self.pull(n);
        if parent == NIL {
            self.root = n;
        } else if lt(e.key, self.n(parent).e.key) {
            self.set_left(parent, n);
        } else {
            self.set_right(parent, n);
        }
        // The nodes above gained this one alone: their minimum falls to its at most.
        while parent != NIL && lt(m, self.n(parent).min_vruntime) {
            self.n_mut(parent).min_vruntime = m;
            parent = self.n(parent).parent;
        }
        if self.leftmost == NIL || lt(e.key, self.n(self.leftmost).e.key) {
            self.leftmost = n;
        }
        self.len += 1;
        n
    }

    /// `rb_erase_augmented_cached` of node `n`.
    pub fn remove(&mut self, n: u32) {
        let Node {
            left,
            right,
            parent,
            ..
        } = *self.n(n);
        if self.leftmost == n {
            // The leftmost has no left child: next comes its right subtree, else its parent.
            self.leftmost = if right != NIL {
                self.leftmost_of(right)
            } else {
                parent
            };
        }
        let joined = self.merge(left, right);
        self.replace_child(parent, n, joined);
        let mut up = parent;
        while up != NIL {
            let old = self.n(up).min_vruntime;
            if self.pull(up) == old {
                break;
            }
            up = self.n(up).parent;
        }
        self.n_mut(n).parent = self.free;
        self.free = n;
        self.len -= 1;
    }

    /// The node after `n` in key order (NIL after the last).
    fn successor(&self, n: u32) -> u32 {
        let node = self.n(n);
        if node.right != NIL {
            return self.leftmost_of(node.right);
        }
        let (mut child, mut up) = (n, node.parent);
        while up != NIL && self.n(up).right == child {
            child = up;
            up = self.n(up).parent;
        }
        up
    }

    /// `__pick_next_entity`: the entity after node `n`.
    pub fn next(&self, n: u32) -> Option<SeId> {
        self.se_of(self.successor(n))
    }

    /// The nodes and their entries in key order.
    pub fn in_order(&self) -> impl Iterator<Item = (u32, Entry)> + '_ {
        let first = (self.leftmost != NIL).then_some(self.leftmost);
        std::iter::successors(first, |&n| Some(self.successor(n)).filter(|&s| s != NIL))
            .map(|n| (n, self.n(n).e))
    }

    /// `pick_eevdf`'s search: the leftmost if `eligible`, else the heap search down the
    /// subtrees' least vruntimes.
    pub fn first_eligible(&self, eligible: impl Fn(u64) -> bool) -> Option<SeId> {
        if self.leftmost != NIL && eligible(self.n(self.leftmost).e.vruntime) {
            return self.first();
        }
        let mut at = self.root;
        while at != NIL {
            let node = self.n(at);
            if node.left != NIL && eligible(self.n(node.left).min_vruntime) {
                at = node.left;
                continue;
            }
            if eligible(node.e.vruntime) {
                return Some(node.e.se);
            }
            at = node.right;
        }
        None
    }

    /// The links, the heap order of priorities and every subtree's minimum are consistent.
    pub fn check(&self) -> Result<(), String> {
        for (n, e) in self.in_order() {
            let node = self.n(n);
            for child in [node.left, node.right].into_iter().filter(|&c| c != NIL) {
                let c = self.n(child);
                if c.parent != n || c.prio > node.prio || c.prio != prio(c.e.se) {
                    return Err(format!("entity {}'s links are broken", c.e.se));
                }
            }
            if node.min_vruntime != self.subtree_min(n) {
                return Err(format!("entity {}'s subtree minimum is stale", e.se));
            }
        }
        if self.root != NIL && self.n(self.root).parent != NIL {
            return Err("the root has a parent".into());
        }
        Ok(())
    }
}
