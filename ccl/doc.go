// Package ccl is simd's collective-communication layer: the vocabulary of collectives (Op) and
// communication groups (GroupKind), the rank layout that turns a parallelism configuration into
// groups of ranks (Layout), and — in its sub-packages — the closed-form cost models of
// collectives. Later it also turns a collective into a flow DAG.
//
// ccl knows ranks and servers, never links: it talks to the network only through the flows it
// produces.
package ccl
