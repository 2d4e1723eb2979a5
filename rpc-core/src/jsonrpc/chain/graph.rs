//! Cycles among the references of a batch: each call on one is refused,
//! naming a cycle it is on (calls that only wait for one are then refused
//! as children of a failed call).

use std::collections::VecDeque;

use super::{Node, Plan, refusal, write_cycle};

/// The most cycles searched for in one strongly connected part; its other
/// calls are refused naming only its size.
const MAX_SEARCHES: usize = 16;

/// Refuses every call of `plan` that is on a cycle of references.
pub(super) fn refuse_cycles(plan: &mut Plan<'_>) {
    for part in strongly_connected(&plan.nodes) {
        let mut refused: Vec<Option<String>> = vec![None; part.len()];
        let mut searches = 0;
        for at in 0..part.len() {
            if refused[at].is_some() {
                continue;
            }
            if searches == MAX_SEARCHES {
                let id = plan.id(part[at]);
                refused[at] =
                    Some(format!("request {id} is on a cycle of the {} requests it is linked with", part.len()));
                continue;
            }
            searches += 1;
            let cycle = shortest_cycle(&plan.nodes, &part, part[at]);
            for (k, &member) in cycle.iter().enumerate() {
                let Ok(slot) = part.binary_search(&member) else { continue };
                if refused[slot].is_some() {
                    continue;
                }
                // The cycle as this member sees it: starting from itself.
                let ids: Vec<&str> = cycle[k..].iter().chain(&cycle[..k]).map(|&m| plan.id(m)).collect();
                let mut why = String::from("cycle ");
                write_cycle(&mut why, &ids);
                refused[slot] = Some(why);
            }
        }
        for (&member, why) in part.iter().zip(refused) {
            let Node::Child { refs, .. } = &plan.nodes[member] else { continue };
            // The first reference into the cycle's part is the one quoted.
            let Some(reference) = refs.iter().find(|r| part.binary_search(&r.parent).is_ok()).or(refs.first()) else {
                continue;
            };
            let why = why.unwrap_or_else(|| "cycle".to_owned());
            plan.nodes[member] = Node::Refused(refusal(reference.text, why));
        }
    }
}

/// The parents of a node (none unless it is a child).
fn parents<'n>(nodes: &'n [Node<'_>], node: usize) -> &'n [usize] {
    match nodes.get(node) {
        Some(Node::Child { parents, .. }) => parents,
        _ => &[],
    }
}

/// The strongly connected parts of more than one node (sorted), by
/// Tarjan's algorithm without recursion.
fn strongly_connected(nodes: &[Node<'_>]) -> Vec<Vec<usize>> {
    const UNSEEN: usize = usize::MAX;
    let n = nodes.len();
    let mut order = vec![UNSEEN; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut next = 0;
    let mut parts = Vec::new();
    for root in 0..n {
        if order[root] != UNSEEN || parents(nodes, root).is_empty() {
            continue;
        }
        // (node, the next of its parents to visit)
        let mut path = vec![(root, 0)];
        order[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&(node, edge)) = path.last() {
            let ps = parents(nodes, node);
            if let Some(&parent) = ps.get(edge) {
                if let Some(top) = path.last_mut() {
                    top.1 += 1;
                }
                if order[parent] == UNSEEN {
                    order[parent] = next;
                    low[parent] = next;
                    next += 1;
                    stack.push(parent);
                    on_stack[parent] = true;
                    path.push((parent, 0));
                } else if on_stack[parent] {
                    low[node] = low[node].min(order[parent]);
                }
                continue;
            }
            path.pop();
            if let Some(&(caller, _)) = path.last() {
                low[caller] = low[caller].min(low[node]);
            }
            if low[node] == order[node] {
                let mut part = Vec::new();
                while let Some(member) = stack.pop() {
                    on_stack[member] = false;
                    part.push(member);
                    if member == node {
                        break;
                    }
                }
                if part.len() > 1 {
                    part.sort_unstable();
                    parts.push(part);
                }
            }
        }
    }
    parts
}

/// A shortest cycle through `start` within `part` (sorted), as the calls
/// in the order they wait for each other: `start` first, not repeated.
fn shortest_cycle(nodes: &[Node<'_>], part: &[usize], start: usize) -> Vec<usize> {
    let mut previous: Vec<Option<usize>> = vec![None; part.len()];
    let mut queue = VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for &parent in parents(nodes, node) {
            if parent == start {
                let mut cycle = vec![node];
                let mut at = node;
                while at != start {
                    match part.binary_search(&at).ok().and_then(|slot| previous[slot]) {
                        Some(before) => {
                            cycle.push(before);
                            at = before;
                        }
                        None => break,
                    }
                }
                cycle.reverse();
                return cycle;
            }
            let Ok(slot) = part.binary_search(&parent) else { continue };
            if previous[slot].is_none() {
                previous[slot] = Some(node);
                queue.push_back(parent);
            }
        }
    }
    vec![start]
}
