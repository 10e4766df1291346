//! `rq->cfs_tasks`: a CPU's queued fair tasks, least recently picked first, linked through
//! each task's `se->group_node` as the kernel's list is, so that a task joins, leaves or
//! moves to the most recent end in O(1) however many are queued. Load balancing reads it
//! from the least recent end (the kernel's tail).

/// The end of the list.
const NONE: u32 = u32::MAX;

/// `se->group_node`: a task's links in its CPU's list (indexed by task).
#[derive(Debug, Clone, Copy)]
pub struct GroupNode {
    /// The next less recently picked task.
    prev: u32,
    /// The next more recently picked task.
    next: u32,
}

impl Default for GroupNode {
    fn default() -> GroupNode {
        GroupNode {
            prev: NONE,
            next: NONE,
        }
    }
}

/// `rq->cfs_tasks`.
#[derive(Debug, Clone, Copy)]
pub struct CfsTasks {
    /// The least recently picked task.
    first: u32,
    /// The most recently picked task.
    last: u32,
    len: u32,
}

impl Default for CfsTasks {
    fn default() -> CfsTasks {
        CfsTasks {
            first: NONE,
            last: NONE,
            len: 0,
        }
    }
}

impl CfsTasks {
    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The least recently picked task (`list_last_entry`, where `detach_tasks` starts).
    pub fn first(&self) -> Option<u32> {
        (self.first != NONE).then_some(self.first)
    }

    /// Task `p` is on this list (given it is on no other CPU's).
    pub fn contains(&self, nodes: &[GroupNode], p: u32) -> bool {
        self.first == p || nodes[p as usize].prev != NONE
    }

    /// `list_add(&se->group_node, &rq->cfs_tasks)`: `p` becomes the most recent.
    pub fn push(&mut self, nodes: &mut [GroupNode], p: u32) {
        nodes[p as usize] = GroupNode {
            prev: self.last,
            next: NONE,
        };
        match self.last {
            NONE => self.first = p,
            last => nodes[last as usize].next = p,
        }
        self.last = p;
        self.len += 1;
    }

    /// `list_del_init(&se->group_node)`.
    pub fn remove(&mut self, nodes: &mut [GroupNode], p: u32) {
        let GroupNode { prev, next } = std::mem::take(&mut nodes[p as usize]);
        match prev {
            NONE => self.first = next,
            prev => nodes[prev as usize].next = next,
        }
        match next {
            NONE => self.last = prev,
            next => nodes[next as usize].prev = prev,
        }
        self.len -= 1;
    }

    /// `list_move(&se->group_node, &rq->cfs_tasks)`: `p` becomes the most recent.
    pub fn move_to_recent(&mut self, nodes: &mut [GroupNode], p: u32) {
        self.remove(nodes, p);
        self.push(nodes, p);
    }

    /// The tasks, least recently picked first.
    pub fn iter<'a>(&self, nodes: &'a [GroupNode]) -> impl Iterator<Item = u32> + 'a {
        std::iter::successors(self.first(), move |&p| {
            let next = nodes[p as usize].next;
            (next != NONE).then_some(next)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Pushes, removals and moves to the recent end leave the list as the vector it
        /// replaced (pushed at the end, moved to the end, removed from where it is).
        #[test]
        fn lists_as_the_vector(ops in prop::collection::vec((0u8..3, 0u32..24), 1..300)) {
            let (mut list, mut nodes, mut model) = (CfsTasks::default(), vec![GroupNode::default(); 24], Vec::new());
            for (op, p) in ops {
                let listed = model.contains(&p);
                prop_assert_eq!(list.contains(&nodes, p), listed);
                match (op, listed) {
                    (0, false) => {
                        list.push(&mut nodes, p);
                        model.push(p);
                    }
                    (1, true) => {
                        list.remove(&mut nodes, p);
                        model.retain(|&q| q != p);
                    }
                    (2, true) => {
                        list.move_to_recent(&mut nodes, p);
                        model.retain(|&q| q != p);
                        model.push(p);
                    }
                    _ => {}
                }
                prop_assert_eq!(list.iter(&nodes).collect::<Vec<_>>(), model.clone());
                prop_assert_eq!(list.first(), model.first().copied());
                prop_assert_eq!(list.len(), model.len());
            }
        }
    }
}
