public import TYTracker

/// What the product detail view shows.
public struct ProductDetailViewState: Sendable, Equatable {
  /// The product's title line: brand and name.
  public var title: String
  /// The price in minor units.
  public var priceMinor: Int
  /// Whether the product is in the user's favourites.
  public var isFavourite: Bool
  /// The size the user picked, if any.
  public var selectedSize: String?
  /// How many the user has put in the cart from this screen.
  public var quantityInCart: Int
  /// Whether the add-to-cart button is enabled.
  public var canAddToCart: Bool
  /// A message for the user after a failed action.
  public var message: String?
}

/// Why adding to the cart failed.
public enum AddToCartError: Error, Equatable, Sendable {
  /// The product has sizes and none is selected.
  case sizeRequired
  /// The quantity is not between 1 and the stock left.
  case invalidQuantity(Int, available: Int)
  /// Nothing is left.
  case outOfStock

  /// A short reason, as tracked and shown.
  public var reason: String {
    switch self {
    case .sizeRequired: "size_required"
    case .invalidQuantity: "invalid_quantity"
    case .outOfStock: "out_of_stock"
    }
  }
}

/// The product detail screen's logic: favourites, sizes, add to cart, share; tracks what the user does.
///
/// ```swift
/// let presenter = ProductDetailPresenter(product: product)  // TYTracker.shared
/// presenter.viewDidAppear()
/// presenter.selectSize("42")
/// try presenter.addToCart(quantity: 1)
/// ```
public final class ProductDetailPresenter {
  /// The product shown.
  public let product: Product
  /// What the view shows now.
  public private(set) var state: ProductDetailViewState
  private let tracker: any CoreTracker

  /// Creates the presenter; `tracker` defaults to Trendyol's shared tracker.
  public init(product: Product, isFavourite: Bool = false, tracker: any CoreTracker = TYTracker.shared) {
    self.product = product
    self.tracker = tracker
    state = ProductDetailViewState(
      title: "\(product.brand) \(product.name)",
      priceMinor: product.priceMinor,
      isFavourite: isFavourite,
      selectedSize: product.sizes.count == 1 ? product.sizes[0] : nil,
      quantityInCart: 0,
      canAddToCart: product.stock > 0,
      message: product.stock > 0 ? nil : "Out of stock"
    )
  }

  /// The screen appeared: tracks a screen view.
  public func viewDidAppear() {
    tracker.track(ProductDetailEvent.viewed(product))
  }

  /// Adds the product to, or removes it from, the favourites.
  public func toggleFavourite() {
    state.isFavourite.toggle()
    tracker.track(ProductDetailEvent.favouriteChanged(product, isFavourite: state.isFavourite))
  }

  /// Picks a size; sizes the product does not have are ignored (and not tracked).
  public func selectSize(_ size: String) {
    guard product.sizes.contains(size), state.selectedSize != size else { return }
    state.selectedSize = size
    state.message = nil
    tracker.track(ProductDetailEvent.sizeSelected(product, size: size))
  }

  /// Adds `quantity` to the cart, checking size and stock first; a failure is tracked and shown.
  public func addToCart(quantity: Int = 1) throws(AddToCartError) {
    let available = product.stock - state.quantityInCart
    let error: AddToCartError? =
      if available <= 0 {
        .outOfStock
      } else if !product.sizes.isEmpty && state.selectedSize == nil {
        .sizeRequired
      } else if quantity < 1 || quantity > available {
        .invalidQuantity(quantity, available: available)
      } else {
        nil
      }
    if let error {
      state.message = error.reason.replacingUnderscores
      tracker.track(ProductDetailEvent.addToCartFailed(product, reason: error.reason))
      throw error
    }
    state.quantityInCart += quantity
    state.canAddToCart = state.quantityInCart < product.stock
    state.message = "Added to cart"
    tracker.track(ProductDetailEvent.addedToCart(product, size: state.selectedSize, quantity: quantity))
  }

  /// Shares the product.
  public func share(via channel: ShareChannel) {
    tracker.track(ProductDetailEvent.shared(product, channel: channel))
  }
}

extension String {
  fileprivate var replacingUnderscores: String {
    String(map { $0 == "_" ? " " : $0 }).capitalizedFirst
  }

  private var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}
