//! Graph algorithms shared by passes over different graphs (the call
//! graph of the inliner, the machine CFG of fold_merges).

/// The nodes of a directed graph (`succs[v]`: the nodes `v` has edges to)
/// in an order where every successor outside a node's own cycle comes
/// first (Tarjan's strongly connected components, iteratively, in
/// completion order), and whether each node lies on a cycle (a component
/// of several nodes, or an edge to itself). Linear in nodes and edges.
pub fn components(succs: &[Vec<usize>]) -> (Vec<usize>, Vec<bool>) {
    let n = succs.len();
    const UNSEEN: usize = usize::MAX;
    let mut number = vec![UNSEEN; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<usize> = Vec::new();
    let mut order = Vec::with_capacity(n);
    let mut on_cycle = vec![false; n];
    let mut next = 0;
    for root in 0..n {
        if number[root] != UNSEEN {
            continue;
        }
        // (node, index of its next successor to look at)
        let mut path: Vec<(usize, usize)> = vec![(root, 0)];
        number[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut i)) = path.last_mut() {
            if let Some(&w) = succs[v].get(*i) {
                *i += 1;
                if w == v {
                    on_cycle[v] = true;
                }
                if number[w] == UNSEEN {
                    number[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    path.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(number[w]);
                }
                continue;
            }
            path.pop();
            if let Some(&(parent, _)) = path.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == number[v] {
                let start = stack.iter().rposition(|&x| x == v).expect("a component's root is on the stack");
                let component = stack.split_off(start);
                let cycle = component.len() > 1;
                for &x in &component {
                    on_stack[x] = false;
                    on_cycle[x] |= cycle;
                    order.push(x);
                }
            }
        }
    }
    (order, on_cycle)
}

