/// Keyed containers a coding call made once per key type and hands out again, for the decoder
/// (``KeyedDecodingState``) and the encoder (``KeyedEncodingState``) alike.
///
/// Giving `init(from:)` or `encode(to:)` a keyed container costs two run-time generic metadata
/// lookups (our container type for the key type, and the standard library's box around it), a
/// witness table lookup, and the box's and its state's allocation and release: about an eighth of
/// decoding a small struct and a third of encoding one, paid again for every element of an array
/// of structs. So the second container a call makes for a key type (the first tells nothing: most
/// calls code one value) is kept here as its box (the one reference a keyed container is)
/// together with its state, the one object it reads or writes everything through. When a value
/// asks for a container of a key type whose kept box nothing else refers to any more (the value
/// that had it is done with it), the state is re-pointed at the new value and the same box is
/// handed out: one metadata lookup (to copy the box out as the container type), no allocation. A
/// box still referred to (a container a value kept, or the container of an enclosing value of the
/// same key type) is never handed out twice; a new container is made for that request, and kept
/// instead.
///
/// That a container is one reference to its box is the standard library's layout, not its API:
/// ``KeyedContainerLayout`` checks it once per process for each of the two container types, and
/// where it does not hold, nothing is kept and every container is made anew.
struct KeptKeyedContainers<State: KeptContainerState>: Emptiable {
    /// The most key types kept at once; a full keeper replaces its entries in turn.
    static var limit: Int { 8 }

    /// One kept container.
    private final class Entry {
        let keyType: ObjectIdentifier
        let state: State
        /// The container's box, held under a stand-in class type (``KeptBox``) for the uniqueness
        /// check: in Swift 6 language mode an unoptimised build answered `false` for every
        /// reference of type `AnyObject`, unique or not. Assigned only in `init`;
        /// `@exclusivity(unchecked)` because the check takes it `inout` and would otherwise check
        /// that access at run time.
        @exclusivity(unchecked) private var box: KeptBox

        fileprivate init(keyType: ObjectIdentifier, box: KeptBox, state: State) {
            self.keyType = keyType
            self.state = state
            self.box = box
        }

        /// Whether nothing but the keeper refers to the container.
        @inline(__always)
        fileprivate var isFree: Bool { isKnownUniquelyReferenced(&box) }

        /// The kept container, as the container type it was made as: the box's reference
        /// reinterpreted as that type (whose layout it is: ``KeyedContainerLayout``), retained
        /// like any copy. Reading it out of memory with `load(as:)` was a call into the standard
        /// library's unspecialised code, about fifty instructions.
        @inline(__always)
        fileprivate func container<Container>(as type: Container.Type) -> Container {
            unsafeBitCast(box, to: Container.self)
        }
    }

    private var entries: [Entry] = []

    /// Nothing kept.
    init() {}

    /// What the keeper has for a key type (``lookUp(_:)``).
    enum Lookup {
        /// A container of the key type is kept at this position.
        case kept(at: Int)
        /// None is kept, but one was made before: the next one is kept.
        case madeBefore
        /// The first container of the key type: made, not kept.
        case first
    }

    /// What the keeper has for `keyType`; notes the key type when it meets it first.
    ///
    /// Asked before the container type's metadata is looked up, so that the first container
    /// of a key type (most calls make only one: an action, a mutation) pays for no lookup more.
    @inline(__always)
    mutating func lookUp(_ keyType: Any.Type) -> Lookup {
        let id = ObjectIdentifier(keyType)
        // By position, not `for entry in entries`: the iterator retained the array and each entry.
        for position in entries.indices where entries[position].keyType == id { return .kept(at: position) }
        return madeBefore(keyType) ? .madeBefore : .first
    }

    /// The kept container at `position` (of `keyType`; `nil`: none kept), its state re-pointed by
    /// `repoint` first, if nothing but this keeper refers to it; else the container `make` makes
    /// (with the state it codes through), kept from now on (see ``keep(_:state:for:)``). The
    /// state of an entry the new one replaces goes to `retire`: its container may still be in
    /// use, and a container may refer to its state unretained (the decoder's does).
    ///
    /// The container is copied straight into the result, not through an optional: an optional
    /// of the container type moved it twice through the type's value witnesses.
    ///
    /// `mutating` though a reuse changes nothing: the owner's stored keeper is then accessed in
    /// place; a non-mutating call copied it out of the owner first, retaining and releasing its
    /// arrays.
    @inline(__always)
    mutating func container<Container>(
        _ type: Container.Type, at position: Int?, for keyType: Any.Type, repoint: (State) -> Void,
        orMake make: () -> (Container, State), retire: (State) -> Void
    ) -> Container {
        if let position {
            // Borrowed, not retained: the array holds the entry throughout.
            let entry = Unmanaged.passUnretained(entries[position])
            let isReused = entry._withUnsafeGuaranteedRef { entry in
                guard entry.isFree else { return false }
                repoint(entry.state)
                return true
            }
            if isReused { return entry._withUnsafeGuaranteedRef { $0.container(as: Container.self) } }
        }
        let (container, state) = make()
        if let replaced = keep(container, state: state, for: keyType) { retire(replaced) }
        return container
    }

    /// Key types a container was made for once in this call: a container is kept only from its
    /// key type's second one on, so that a call that decodes a single struct or an action (a
    /// container or two, never asked for again) pays only this check (about 3% of an action's
    /// decode). Keeping the first made it a quarter slower.
    private var madeOnce = TypeMemo()

    /// Whether a container of `keyType` was made before in this call, or by a state its thread
    /// keeps in an earlier one (from then on containers of it are kept and handed out again);
    /// notes the key type if not. Once the memo is full, every key type counts as made before.
    private mutating func madeBefore(_ keyType: Any.Type) -> Bool {
        if madeOnce.contains(ObjectIdentifier(keyType)) || madeOnce.isFull { return true }
        madeOnce = take(&madeOnce).adding(keyType)
        return false
    }

    /// The entry a full keeper replaces next: each in turn, so that a state its thread keeps for
    /// good goes on keeping the key types it meets now, not only its first ``limit``.
    private var nextReplaced = 0

    /// Keeps `container` (of `keyType`, coding through `state`), made because no container of
    /// that key type was free: in place of the one kept before (which some value still holds,
    /// and which stays its own), beside the others, or, once the keeper is full, in place of
    /// the others in turn. Replacing keeps reuse going where the first container of a key type
    /// stays in use, as a recursive type's outermost one does for the whole call.
    /// Returns the state of the entry replaced, if any.
    private mutating func keep<Container>(_ container: Container, state: State, for keyType: Any.Type) -> State? {
        let id = ObjectIdentifier(keyType)
        let entry = Entry(keyType: id, box: KeyedContainerLayout.box(of: container), state: state)
        let position: Int
        if let kept = entries.firstIndex(where: { $0.keyType == id }) {
            position = kept
        } else if entries.count < Self.limit {
            entries.append(entry)
            return nil
        } else {
            position = nextReplaced
            nextReplaced = (nextReplaced + 1) % Self.limit
        }
        let replaced = entries[position].state
        entries[position] = entry
        return replaced
    }

    /// Has the state of each kept container that nothing else refers to and that coded the value
    /// `owner` stands for (a decoder's coding path link, an encoder's node), which just finished,
    /// let go of it: a reference from the state would keep it from being reused for the next value.
    /// `mutating` for the same reason as ``container(_:at:for:repoint:orMake:)``.
    @inline(__always)
    mutating func letGo(of owner: State.Owner) {
        for position in entries.indices {
            // Borrowed, not retained, as in `container`.
            Unmanaged.passUnretained(entries[position])._withUnsafeGuaranteedRef { entry in
                if entry.state.isOwned(by: owner), entry.isFree { entry.state.letGo() }
            }
        }
    }
}

/// The one object a kept keyed container reads or writes through (see ``KeptKeyedContainers``).
protocol KeptContainerState: AnyObject {
    /// What stands for the value the container codes, and is reused for the next value once
    /// nothing else refers to it.
    associatedtype Owner: AnyObject
    /// Whether the container codes `owner`'s value (or coded it, until the state let go of it).
    func isOwned(by owner: Owner) -> Bool
    /// Lets go of the value's owner (and whatever else of it the state holds) while the state
    /// waits to be re-pointed.
    func letGo()
}

/// Whether the standard library's keyed containers are the one strong reference that
/// ``KeptKeyedContainers`` keeps them as.
enum KeyedContainerLayout {
    /// Checked once per process: a container is one word that is not trivially copied: a
    /// reference, and a strong one (a weak or unowned one could not keep its box alive). A round
    /// trip through a probe container (copying the box back out as a container) also passed, but
    /// after it every later decode of a small action ran about 400 instructions longer in the
    /// runtime's conformance cache (callgrind), so it is not made.
    static let isOneReference: Bool = isOneWordReference(KeyedDecodingContainer<MessagePackKey>.self)

    /// The same check for `KeyedEncodingContainer`.
    static let encodingIsOneReference: Bool = isOneWordReference(KeyedEncodingContainer<MessagePackKey>.self)

    private static func isOneWordReference<Container>(_ type: Container.Type) -> Bool {
        MemoryLayout<Container>.size == MemoryLayout<AnyObject>.size
            && MemoryLayout<Container>.alignment == MemoryLayout<AnyObject>.alignment
            && !_isPOD(Container.self)
    }

    /// The box `container` is one reference to (a retained copy of that reference), under the
    /// stand-in type ``KeptBox``; only where ``isOneReference``.
    @inline(__always)
    static func box<Container>(of container: Container) -> KeptBox {
        withUnsafeBytes(of: container) { $0.load(as: KeptBox.self) }
    }
}

/// The static type a kept container's box is held under: never made, never called. Retaining,
/// releasing and the uniqueness check act on the object's header alone, the same for every
/// Swift class (and releasing the last reference deinitialises the object as what it is), so a
/// reference to the standard library's box may be held as this type.
final class KeptBox {
    private init() {}
}
