// Copyright Example Games. All Rights Reserved.

#pragma once

#include "CoreMinimal.h"
#include "Components/ActorComponent.h"
#include "Engine/DataTable.h"
#include "InventoryComponent.generated.h"

class UInventoryItemDefinition;

DECLARE_LOG_CATEGORY_EXTERN(LogInventory, Log, All);

DECLARE_DYNAMIC_MULTICAST_DELEGATE_TwoParams(FOnInventoryChanged, UInventoryComponent*, Inventory, int32, SlotIndex);

/** How an item stacks in a slot. */
UENUM(BlueprintType)
enum class EStackRule : uint8
{
	Single UMETA(DisplayName = "Single"),
	Stackable UMETA(DisplayName = "Stackable")
};

/** One slot of an inventory. */
USTRUCT(BlueprintType)
struct LYRA_API FInventorySlot : public FTableRowBase
{
	GENERATED_BODY()

	UPROPERTY(EditAnywhere, BlueprintReadWrite, Category = "Inventory", meta = (ClampMin = "0"))
	int32 Count = 0;

	UPROPERTY(EditAnywhere, BlueprintReadOnly, Category = "Inventory")
	TObjectPtr<UInventoryItemDefinition> Item = nullptr;

	bool IsEmpty() const { return Count <= 0 || Item == nullptr; }
};

/**
 * Holds the items a pawn carries, in fixed slots.
 */
UCLASS(ClassGroup = (Inventory), meta = (BlueprintSpawnableComponent), Blueprintable)
class LYRA_API UInventoryComponent : public UActorComponent
{
	GENERATED_BODY()

public:
	UInventoryComponent(const FObjectInitializer& ObjectInitializer = FObjectInitializer::Get());

	//~UActorComponent interface
	virtual void BeginPlay() override;
	virtual void EndPlay(const EEndPlayReason::Type EndPlayReason) override;
	//~End of UActorComponent interface

	/** Adds Count of Item to the first slot that takes it; returns how many did not fit. */
	UFUNCTION(BlueprintCallable, BlueprintAuthorityOnly, Category = "Inventory")
	int32 AddItem(UInventoryItemDefinition* Item, int32 Count = 1);

	/** The slot at Index, or an empty slot. */
	UFUNCTION(BlueprintPure, Category = "Inventory")
	FInventorySlot GetSlot(int32 Index) const;

	UFUNCTION(Server, Reliable, WithValidation)
	void ServerDropItem(int32 SlotIndex);

	FORCEINLINE int32 NumSlots() const { return Slots.Num(); }

#if WITH_EDITOR
	virtual EDataValidationResult IsDataValid(class FDataValidationContext& Context) const override;
#endif

	UPROPERTY(BlueprintAssignable, Category = "Inventory")
	FOnInventoryChanged OnInventoryChanged;

protected:
	UFUNCTION()
	void OnRep_Slots();

private:
	UPROPERTY(ReplicatedUsing = OnRep_Slots, EditDefaultsOnly, Category = "Inventory")
	TArray<FInventorySlot> Slots;

	UPROPERTY(EditDefaultsOnly, Category = "Inventory", meta = (ClampMin = "1", UIMin = "1"))
	int32 MaxSlots = 20;
};
